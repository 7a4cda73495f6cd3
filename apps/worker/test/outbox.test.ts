import { Store } from '@tributary/queue';
import { startRedis, uniquePrefix } from '@tributary/testkit';
import { describe, expect, it } from 'vitest';
import { type OutboundMessage, Outbox } from '../src/outbox.js';

describe('outbox', () => {
  it('delivers each batch reply once, and retries when a sink failed', async () => {
    const server = await startRedis();
    const store = Store.open({
      url: server.url,
      connection: { kind: 'patient' },
      queue: { prefix: uniquePrefix('outbox') },
    });
    const posted: string[] = [];
    let failNext = true;
    const outbox = new Outbox(store.replies, [
      {
        name: 'flaky',
        send: async (m) => {
          if (failNext) {
            failNext = false;
            throw new Error('platform down');
          }
          posted.push(`${m.batchId}:${m.kind}`);
        },
      },
    ]);
    const message: OutboundMessage = {
      thread: 't',
      batchId: 'b1',
      kind: 'reply',
      text: 'hi',
      target: { platform: 'gateway', channelId: 'C', replyToEventId: 'e' },
    };
    try {
      await expect(outbox.deliver(message)).rejects.toThrow('platform down');
      expect(await outbox.deliver(message)).toBe('sent');
      expect(await outbox.deliver(message)).toBe('already-sent');
      expect(await outbox.deliver({ ...message, kind: 'notice' })).toBe('sent');
      expect(posted).toEqual(['b1:reply', 'b1:notice']);
    } finally {
      await store.close();
      await server.stop();
    }
  });
});
