import type { Sender } from '@tributary/packing';
import type { JsonFields } from '../json-body.js';

/**
 * Who sent a message. `sender_chat` wins over `from`: a post on behalf of a channel or an anonymous
 * group admin has a placeholder bot in `from`. A channel post may carry neither; then the chat is
 * the sender.
 */
export function telegramSender(message: JsonFields): Sender {
  const chat = message.optionalObject('sender_chat');
  const from = message.optionalObject('from');
  if (chat === undefined && from !== undefined) {
    const fullName = [from.string('first_name'), from.optionalString('last_name')].filter(Boolean).join(' ');
    return {
      id: String(from.integer('id')),
      name: from.optionalString('username') || fullName,
      displayName: fullName,
      isBot: from.optionalBoolean('is_bot') ?? false,
    };
  }
  const sender = chat ?? message.object('chat');
  const id = String(sender.integer('id'));
  const title = sender.optionalString('title') || sender.optionalString('username') || id;
  return { id, name: sender.optionalString('username') || title, displayName: title, isBot: false };
}
