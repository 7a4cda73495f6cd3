import { expect } from 'vitest';
import { type Inbound, type InboundMessage, InvalidWebhookError, type WebhookRequest } from '../src/index.js';

/** 2025-01-01T09:30:00Z, the wall clock of every request unless a test says otherwise. */
export const NOW = Date.UTC(2025, 0, 1, 9, 30);

export function webhookRequest(
  body: unknown,
  headers: Record<string, string | undefined> = {},
  now = NOW,
): WebhookRequest {
  const rawBody = Buffer.isBuffer(body)
    ? body
    : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  return { rawBody, headers, now };
}

export function messageOf(inbound: Inbound): InboundMessage {
  if (inbound.kind !== 'message') throw new Error(`expected a message, got ${JSON.stringify(inbound)}`);
  return inbound.message;
}

/** The InvalidWebhookError `parse` throws; fails the test when it throws something else or nothing. */
export function rejection(parse: () => unknown): InvalidWebhookError {
  try {
    parse();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidWebhookError);
    return error as InvalidWebhookError;
  }
  throw new Error('parse accepted it');
}
