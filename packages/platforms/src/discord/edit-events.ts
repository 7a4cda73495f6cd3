import type { Inbound } from '../inbound.js';
import { editInbound, ignored } from '../inbound-message.js';
import type { JsonFields } from '../json-body.js';
import { isoFromRfc3339 } from '../platform-time.js';
import { snowflake } from './ids.js';

/**
 * A forwarded MESSAGE_UPDATE, parsed as the message it now is (`parsed`). Discord also sends updates
 * nobody made (embeds resolved from links): those have no `edited_timestamp` and are ignored. The
 * edit's identity is the message's with its `edited_timestamp`.
 */
export function discordEdit(message: JsonFields, parsed: Inbound): Inbound {
  if (parsed.kind !== 'message') return parsed;
  const editedTimestamp = message.optionalString('edited_timestamp');
  if (editedTimestamp === undefined) return ignored('discord message update without an edit');
  const editedAt = isoFromRfc3339(editedTimestamp, message.field('edited_timestamp'));
  const { message: original } = parsed;
  return editInbound({
    ...original,
    event: { ...original.event, editedAt },
    idempotencyKey: `${original.idempotencyKey}:edit:${editedAt}`,
  });
}

/** A forwarded MESSAGE_DELETE: only the message's id and channel (a Discord thread is a channel). */
export function discordDelete(message: JsonFields): Inbound {
  const channelId = snowflake(message, 'channel_id');
  const id = snowflake(message, 'id');
  return {
    kind: 'delete',
    thread: `discord:${channelId}`,
    messageId: id,
    idempotencyKey: `discord:${channelId}:${id}:delete`,
    ref: { platform: 'discord', channelId, messageId: id },
  };
}
