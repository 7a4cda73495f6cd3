import type { Inbound } from '../inbound.js';
import { InvalidWebhookError } from '../inbound.js';
import { ignored, messageInbound } from '../inbound-message.js';
import type { JsonFields } from '../json-body.js';
import type { ThreadParent } from '../outbound.js';
import { isoFromUnixSeconds } from '../platform-time.js';
import { telegramFiles } from './files.js';
import { telegramSender } from './sender.js';

/** Where a chat that is not a forum topic keeps its one conversation. */
export const TELEGRAM_MAIN_THREAD = 'main';

/**
 * A `message` or `channel_post`. Thread rule: a forum topic (`is_topic_message`) is its own thread,
 * `telegram:<chat>:<message_thread_id>`; everything else in a chat, reply chains included, is one
 * conversation, `telegram:<chat>:main`. A reply's `reply_to_message` becomes `parent`.
 */
export function parseTelegramMessage(message: JsonFields, botUsername: string | undefined): Inbound {
  const textKey = message.has('text') ? 'text' : 'caption';
  const text = message.optionalString(textKey) ?? '';
  const attachments = telegramFiles(message);
  if (!message.has(textKey) && attachments.length === 0) {
    return ignored('telegram message without text or files (a service message, poll, location, …)');
  }
  const chat = message.object('chat');
  const chatId = String(chat.integer('id'));
  const messageId = String(message.integer('message_id'));
  const topic =
    message.optionalBoolean('is_topic_message') === true
      ? String(message.integer('message_thread_id'))
      : undefined;
  const reply = message.optionalObject('reply_to_message');
  const parent = reply === undefined ? undefined : threadParent(reply);
  const entities = message.objects(textKey === 'text' ? 'entities' : 'caption_entities');
  const mentions = telegramMentions(text, entities).map((id) => ourSpelling(id, botUsername) ?? id);
  // A reply to the bot addresses it as surely as an @mention does (Discord reports it the same way).
  const repliedToUs = ourSpelling(reply?.optionalObject('from')?.optionalString('username'), botUsername);
  return messageInbound({
    event: {
      eventId: messageId,
      platform: 'telegram',
      channelId: chatId,
      threadId: topic,
      sender: telegramSender(message),
      timestamp: isoFromUnixSeconds(message.integer('date'), message.field('date')),
      text,
      attachments,
    },
    thread: `telegram:${chatId}:${topic ?? TELEGRAM_MAIN_THREAD}`,
    idempotencyKey: `telegram:${chatId}:${messageId}`,
    mentions: repliedToUs === undefined ? mentions : [...mentions, repliedToUs],
    ref: { platform: 'telegram', channelId: chatId, threadId: topic, messageId },
    direct: chat.optionalString('type') === 'private',
    parent,
  });
}

/**
 * `mention` entities give a username (without '@'); `text_mention` entities, for users without one,
 * give the user id. Offsets count UTF-16 code units, as JavaScript strings do.
 */
function telegramMentions(text: string, entities: JsonFields[]): string[] {
  return entities.flatMap((entity) => {
    const type = entity.string('type');
    if (type === 'text_mention') return [String(entity.object('user').integer('id'))];
    if (type !== 'mention') return [];
    const offset = entity.integer('offset');
    const end = offset + entity.integer('length');
    if (offset < 0 || end <= offset + 1 || end > text.length) {
      throw new InvalidWebhookError(`${entity.field('offset')} and length must lie within the text`);
    }
    return [text.slice(offset + 1, end)];
  });
}

/** Usernames are case-insensitive: our own is reported as configured, so gates can compare exactly. */
function ourSpelling(username: string | undefined, botUsername: string | undefined): string | undefined {
  if (username === undefined || botUsername === undefined) return undefined;
  return username.toLowerCase() === botUsername.toLowerCase() ? botUsername : undefined;
}

function threadParent(reply: JsonFields): ThreadParent {
  const sender = telegramSender(reply);
  return {
    messageId: String(reply.integer('message_id')),
    senderId: sender.id,
    senderName: sender.displayName,
    text: reply.optionalString('text') ?? reply.optionalString('caption') ?? '',
    timestamp: isoFromUnixSeconds(reply.integer('date'), reply.field('date')),
  };
}
