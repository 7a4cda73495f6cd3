import { TelegramInboundAdapter, type WebhookRequest } from '../src/index.js';
import { webhookRequest } from './support-inbound.js';

export const SECRET_TOKEN = 'telegram_secret-token_for_tests';

export const telegram = new TelegramInboundAdapter({
  secretToken: SECRET_TOKEN,
  botUsername: 'TributaryBot',
});

/** 2025-01-01T09:30:00Z in unix seconds. */
export const DATE = 1735723800;
export const GROUP = -1001234567890;

export const alice = { id: 111, is_bot: false, first_name: 'Alice', last_name: 'Liddell', username: 'alice' };

export function telegramMessage(message: Record<string, unknown> = {}, updateId = 5001) {
  return {
    update_id: updateId,
    message: {
      message_id: 42,
      from: alice,
      chat: { id: GROUP, type: 'supergroup', title: 'Builds' },
      date: DATE,
      text: 'check the build',
      ...message,
    },
  };
}

export function telegramRequest(
  body: unknown,
  headers = { 'x-telegram-bot-api-secret-token': SECRET_TOKEN },
): WebhookRequest {
  return webhookRequest(body, headers);
}
