import { describe, expect, it } from 'vitest';
import { TelegramInboundAdapter } from '../src/index.js';
import { webhookRequest } from './support-inbound.js';
import { SECRET_TOKEN, telegram, telegramMessage, telegramRequest } from './telegram-inbound-fixtures.js';

describe('Telegram request verification', () => {
  it('accepts the configured secret token', () => {
    expect(telegram.verify(telegramRequest(telegramMessage()))).toEqual({ ok: true });
  });

  it.each([
    ['no secret token header', undefined, 'missing x-telegram-bot-api-secret-token'],
    ['an empty token', '', 'not the configured secret token'],
    ['another token', 'another-secret', 'not the configured secret token'],
    [
      'a token differing in one character',
      `${SECRET_TOKEN.slice(0, -1)}X`,
      'not the configured secret token',
    ],
    ['a longer token', `${SECRET_TOKEN}x`, 'not the configured secret token'],
    ['a token in another case', SECRET_TOKEN.toUpperCase(), 'not the configured secret token'],
  ])('rejects %s', (_label, token, reason) => {
    const verification = telegram.verify(
      webhookRequest(telegramMessage(), { 'x-telegram-bot-api-secret-token': token }),
    );
    expect(verification.ok).toBe(false);
    expect(verification.ok === false && verification.reason).toContain(reason);
  });

  it('refuses to be built with an empty secret token', () => {
    expect(() => new TelegramInboundAdapter({ secretToken: '' })).toThrow('secretToken');
  });
});
