import type { Inbound } from '../inbound.js';
import { editInbound, ignored } from '../inbound-message.js';
import type { JsonFields } from '../json-body.js';
import { isoFromSlackTs } from '../platform-time.js';
import { checkSlackTs, parseSlackEvent, type SlackSelf, slackThreadKey } from './message-event.js';

/**
 * A `message` event of subtype `message_changed` or `message_deleted`; undefined for any other event.
 * `keyTeam`: the team its thread key names (slackThreadKey).
 */
export function parseSlackChange(event: JsonFields, self: SlackSelf, keyTeam?: string): Inbound | undefined {
  if (event.optionalString('type') !== 'message') return undefined;
  const subtype = event.optionalString('subtype');
  if (subtype === 'message_changed') return parseSlackEdit(event, self, keyTeam);
  if (subtype === 'message_deleted') return parseSlackDelete(event, keyTeam);
  return undefined;
}

/**
 * A `message_changed` event: `message` is the message as it now reads, without its channel (that is the
 * event's). It is parsed as the message it is; `message.edited.ts` is the edit's time and, with the
 * message's own identity, the edit's identity. A change without `edited` is Slack's own (an unfurl, a
 * reply count): nobody edited anything.
 */
function parseSlackEdit(event: JsonFields, self: SlackSelf, keyTeam: string | undefined): Inbound {
  const message = event.object('message');
  const edited = message.optionalObject('edited');
  if (edited === undefined) return ignored('slack message_changed without an edit');
  const editedTs = edited.string('ts');
  checkSlackTs(editedTs, edited.field('ts'));
  const parsed = parseSlackEvent(
    message.with({
      type: 'message',
      channel: event.nonEmptyString('channel'),
      channel_type: event.optionalString('channel_type'),
    }),
    self,
    keyTeam,
  );
  if (parsed.kind !== 'message') return parsed;
  const { message: original } = parsed;
  return editInbound({
    ...original,
    event: { ...original.event, editedAt: isoFromSlackTs(editedTs, edited.field('ts')) },
    idempotencyKey: `${original.idempotencyKey}:edit:${editedTs}`,
  });
}

/** A `message_deleted` event names the message by `deleted_ts`; `previous_message` tells its thread. */
function parseSlackDelete(event: JsonFields, keyTeam: string | undefined): Inbound {
  const channel = event.nonEmptyString('channel');
  const ts = event.string('deleted_ts');
  checkSlackTs(ts, event.field('deleted_ts'));
  const threadTs = event.optionalObject('previous_message')?.optionalString('thread_ts');
  if (threadTs !== undefined) checkSlackTs(threadTs, event.field('previous_message.thread_ts'));
  const root = threadTs ?? ts;
  return {
    kind: 'delete',
    thread: slackThreadKey(channel, root, keyTeam),
    messageId: ts,
    idempotencyKey: `slack:${channel}:${ts}:delete`,
    ref: { platform: 'slack', channelId: channel, threadId: root, messageId: ts },
  };
}
