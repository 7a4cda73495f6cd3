import { type Attachment, attachmentUri, type Sender } from '@tributary/packing';
import type { Inbound } from '../inbound.js';
import { InvalidWebhookError } from '../inbound.js';
import { ignored, messageInbound } from '../inbound-message.js';
import { compact, type JsonFields } from '../json-body.js';
import { isoFromSlackTs } from '../platform-time.js';
import { throughLast } from '../strip-mention.js';

/** Our own identity on Slack: events we caused come back and must not reach the agent. */
export interface SlackSelf {
  /** The bot user (U…). */
  selfUserId?: string;
  /** The bot (B…). */
  selfBotId?: string;
}

// Bot messages are parsed too (marked isBot): whether they reach the agent is the gates' decision.
const ACCEPTED_SUBTYPES = new Set(['file_share', 'thread_broadcast', 'bot_message']);
const SLACK_TS = /^\d{1,12}\.\d{6}$/;
// Looked for only up to the text's last '>' (see throughLast): past it `[^>]*` would make it quadratic.
const USER_MENTION = /<@([A-Z0-9]+)(?:\|[^>]*)?>/g;

/**
 * A thread's key: `slack:<channel>:<root ts>`, or `slack:<team>:<channel>:<root ts>` for a team answered
 * with a token of its own (docs/adr/0061). The team is named only there, so that the keys of a deployment's
 * own team, all it had before it served others, never change.
 */
export function slackThreadKey(channel: string, root: string, team: string | undefined): string {
  return team === undefined ? `slack:${channel}:${root}` : `slack:${team}:${channel}:${root}`;
}

/**
 * A `message` or `app_mention` event. An @mention arrives as both, with different envelope event ids
 * but the same channel and ts, which is why (channel, ts) is the dedup identity. `keyTeam`: the team
 * its thread key names (slackThreadKey).
 */
export function parseSlackEvent(event: JsonFields, self: SlackSelf, keyTeam?: string): Inbound {
  const type = event.string('type');
  if (type !== 'message' && type !== 'app_mention') return ignored(`slack ${type} event`);
  const subtype = event.optionalString('subtype');
  if (subtype !== undefined && !ACCEPTED_SUBTYPES.has(subtype)) {
    return ignored(`slack message subtype ${subtype}`);
  }
  const user = event.optionalString('user');
  const botId = event.optionalString('bot_id');
  if (isOurs(user, self.selfUserId) || isOurs(botId, self.selfBotId)) {
    return ignored('slack message from ourselves');
  }

  const channel = event.nonEmptyString('channel');
  const ts = event.string('ts');
  const threadTs = event.optionalString('thread_ts');
  checkSlackTs(ts, event.field('ts'));
  if (threadTs !== undefined) checkSlackTs(threadTs, event.field('thread_ts'));
  const root = threadTs ?? ts;
  const text = event.optionalString('text') ?? '';
  return messageInbound({
    event: {
      eventId: ts,
      platform: 'slack',
      channelId: channel,
      threadId: threadTs,
      sender: slackSender(event, user ?? botId, subtype === 'bot_message' || botId !== undefined),
      timestamp: isoFromSlackTs(ts, 'event.ts'),
      text,
      attachments: slackFiles(event, ts),
    },
    thread: slackThreadKey(channel, root, keyTeam),
    idempotencyKey: `slack:${channel}:${ts}`,
    mentions: [...text.slice(0, throughLast(text, '>')).matchAll(USER_MENTION)].map((match) => match[1]!),
    // Replies go to the thread root, so a reply to a top-level message starts its thread.
    ref: { platform: 'slack', channelId: channel, threadId: root, messageId: ts },
    direct: event.optionalString('channel_type') === 'im',
  });
}

/** A ts is a message's identity and part of its keys: only Slack's exact shape is accepted. */
export function checkSlackTs(ts: string, field: string): void {
  if (!SLACK_TS.test(ts)) throw new InvalidWebhookError(`${field} must be a Slack ts like 1531420618.000200`);
}

function isOurs(id: string | undefined, self: string | undefined): boolean {
  return id !== undefined && id === self;
}

function slackSender(event: JsonFields, id: string | undefined, isBot: boolean): Sender {
  if (id === undefined) throw new InvalidWebhookError(`${event.field('user')} is missing (and so is bot_id)`);
  const profile = event.optionalObject('user_profile');
  // `||`, not `??`: Slack sends '' for a display name the user never set.
  const name = profile?.optionalString('name') || event.optionalString('username') || id;
  const displayName = profile?.optionalString('display_name') || profile?.optionalString('real_name') || name;
  return { id, name, displayName, isBot };
}

/** Links carrying `url_private` as their source: a worker downloads them with the bot token. */
function slackFiles(event: JsonFields, ts: string): Attachment[] {
  return event.objects('files').map((file, index) => {
    const name = file.optionalString('name') || file.optionalString('title') || file.nonEmptyString('id');
    const url = file.optionalString('url_private');
    const size = file.optionalInteger('size');
    return {
      kind: 'link',
      // Files shared from another workspace may come without a URL; the agent still learns of them.
      uri: url ?? attachmentUri(ts, index, name),
      name,
      mimeType: file.optionalString('mimetype') || undefined,
      source: url === undefined ? undefined : compact({ platform: 'slack', ref: url, size }),
    };
  });
}
