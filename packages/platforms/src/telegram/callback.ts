import { readApprovalButton } from '../approval-buttons.js';
import type { Inbound } from '../inbound.js';
import { ignored } from '../inbound-message.js';
import type { JsonFields } from '../json-body.js';

/**
 * A `callback_query`: a click on an inline button. Ours are the buttons of permission requests; the
 * webhook's answer carries Telegram's `answerCallbackQuery`, so the clicker's client stops waiting
 * and, for a refusal, shows them why in an alert only they see.
 */
export function parseTelegramCallback(query: JsonFields): Inbound {
  const button = readApprovalButton(query.optionalString('data') ?? '');
  if (button === undefined) return ignored('telegram callback_query of a button that is not ours');
  const message = query.optionalObject('message');
  if (message === undefined) return ignored('telegram callback_query of a message too old to show');
  const callbackId = query.nonEmptyString('id');
  const thread = message.optionalInteger('message_thread_id');
  return {
    kind: 'approval',
    approvalId: button.id,
    option: button.option,
    userId: String(query.object('from').integer('id')),
    userName: query.object('from').optionalString('username') ?? query.object('from').string('first_name'),
    ref: {
      platform: 'telegram',
      channelId: String(message.object('chat').integer('id')),
      ...(thread === undefined ? {} : { threadId: String(thread) }),
      messageId: String(message.integer('message_id')),
    },
    idempotencyKey: `telegram:callback:${callbackId}`,
    privately: true,
    respond: (answer) => ({
      method: 'answerCallbackQuery',
      callback_query_id: callbackId,
      ...(answer === undefined ? {} : { text: answer.slice(0, 200), show_alert: true }),
    }),
  };
}
