import type { ArrivalEvent } from '@tributary/packing';
import type { FakeApiCall } from '@tributary/testkit';
import { expect } from 'vitest';
import type { RetryPolicy } from '../src/http/retry-policy.js';
import type { MessageRef } from '../src/message-ref.js';

/** Short backoff so retry tests run fast; Retry-After waits stay as the platform says. */
export const FAST_RETRY: Partial<RetryPolicy> = { baseDelayMs: 5, maxDelayMs: 20, maxAttempts: 3 };

/** An answer's address in `channelId`: the message it answers, and what `extra` adds (a thread, a replyRef). */
export function answering(platform: string, channelId: string, extra: Partial<MessageRef> = {}): MessageRef {
  return { platform, channelId, messageId: '1', ...extra };
}

/** An event in a thread, as the inbound adapters would hand it to `fetchThreadParent`. */
export function threadEvent(platform: string, channelId: string, threadId: string | undefined): ArrivalEvent {
  return {
    eventId: `${platform}-event`,
    platform,
    channelId,
    ...(threadId === undefined ? {} : { threadId }),
    sender: { id: 'U-asker', name: 'asker', displayName: 'Asker', isBot: false },
    timestamp: '2025-03-01T10:00:00.000Z',
    text: 'question',
    attachments: [],
  };
}

/** The retry arrived no sooner than the advised wait after the 429, by the server's own clock. */
export function expectWaitedAtLeast(calls: FakeApiCall[], ms: number): void {
  const [limited, retried] = calls;
  expect(limited?.status).toBe(429);
  expect(retried!.at - limited!.at).toBeGreaterThanOrEqual(ms);
}
