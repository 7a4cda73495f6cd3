import { InvalidWebhookError } from '../inbound.js';
import type { JsonFields } from '../json-body.js';
import { escapeRegExp, stripMention } from '../strip-mention.js';

// ANNOUNCEMENT_THREAD, PUBLIC_THREAD, PRIVATE_THREAD. Other channels may have a parent_id too: their category.
const THREAD_CHANNEL_TYPES = new Set([10, 11, 12]);

/** Discord ids are decimal snowflakes; checking the shape keeps `:`-joined keys unambiguous. */
export function snowflake(fields: JsonFields, key: string): string {
  const id = fields.string(key);
  if (!/^\d{1,20}$/.test(id)) {
    throw new InvalidWebhookError(`${fields.field(key)} must be a Discord snowflake`);
  }
  return id;
}

/**
 * A Discord thread is a channel of its own. For the event and its ref, a message in a thread is in the
 * thread's parent channel, with the thread as threadId; the outbound client posts and reacts in
 * `threadId ?? channelId`.
 */
export function discordPlace(
  channelId: string,
  channel: JsonFields | undefined,
): { channelId: string; threadId?: string } {
  const type = channel?.optionalInteger('type');
  if (channel === undefined || type === undefined || !THREAD_CHANNEL_TYPES.has(type)) return { channelId };
  return { channelId: snowflake(channel, 'parent_id'), threadId: channelId };
}

/** `<@id>` and the older nickname form `<@!id>`. */
export function stripDiscordMention(text: string, selfId: string, selfName?: string): string {
  return stripMention(text, `<@!?${escapeRegExp(selfId)}>`, selfName);
}
