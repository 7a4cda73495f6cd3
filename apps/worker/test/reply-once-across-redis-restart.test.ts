import type { PlatformClient } from '@tributary/platforms';
import { Store } from '@tributary/queue';
import { startRedis, uniquePrefix, waitFor } from '@tributary/testkit';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type OutboundMessage, toOutbound } from '../src/replies/outbox.js';
import { PlatformReplySink } from '../src/replies/platform-reply-sink.js';
import { replySink } from '../src/replies/reply-sink.js';

const THREAD = 'gateway:c:t';
const target = { platform: 'telegram', channelId: 'c', threadId: 't', messageId: 'e' };

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup.length = 0;
});

/** A platform that takes every post and edit; `onPost` runs once the post is taken, before it answers. */
function platform(onPost: () => Promise<void>) {
  const posts: string[] = [];
  const edits: string[] = [];
  const client: PlatformClient = {
    platform: 'gateway',
    maxMessageLength: 1_000,
    render: (markdown) => markdown,
    async send(_target, text) {
      posts.push(text);
      await onPost();
      return `platform-${posts.length}`;
    },
    async edit(_target, messageId, text) {
      edits.push(`${messageId}: ${text}`);
    },
  };
  return { client, posts, edits };
}

describe('a reply posted while Redis goes down (real Redis, killed and restarted)', {
  timeout: 60_000,
}, () => {
  it('is edited on the next attempt, never posted again, and no failed delivery is reported', async () => {
    const redis = await startRedis({ private: true, appendfsync: 'always' });
    cleanup.push(() => redis.stop());
    const store = Store.open({
      url: redis.url,
      connection: { kind: 'patient' },
      // The sweeper offers the thread again once Redis answers.
      queue: { prefix: uniquePrefix('once'), sweepIntervalMs: 200 },
    });
    cleanup.push(async () => store.disconnect());

    // Redis dies between the platform's answer and the record of the posted part (here: the done).
    let killed = false;
    const { client, posts, edits } = platform(async () => {
      if (killed) return;
      killed = true;
      await redis.kill('SIGKILL');
    });
    const logs: Record<string, unknown>[] = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => logs.push(JSON.parse(line)) });
    const outcomes: string[] = [];
    const runner = store.runner({
      logger,
      handler: async (batch) => {
        const message: OutboundMessage = {
          thread: THREAD,
          batchId: batch.id,
          kind: 'reply',
          text: 'the answer',
          target,
        };
        return { reply: message.text, stopReason: 'end_turn', outbound: [toOutbound(message)] };
      },
      replies: replySink(new PlatformReplySink(new Map([['gateway', client]])), []),
      delivery: { retry: { horizonMs: 60_000, firstDelayMs: 20, maxDelayMs: 40 }, lockMs: 30_000 },
      events: { replyDelivery: (outcome) => outcomes.push(outcome) },
    });
    await runner.start();
    cleanup.push(() => runner.close());

    await store.queue.intake.enqueue(THREAD, { id: 'm1', body: 'x' });
    await waitFor(
      () => logs.some((l) => l.msg === 'reply delivery interrupted; it is retried from the outbox'),
      {
        what: 'the attempt to break off while Redis is down',
      },
    );
    await redis.restart();
    await waitFor(async () => (await store.replies.pending(THREAD)).length === 0, {
      what: 'the reply to leave the outbox',
      intervalMs: 200,
    });

    expect(posts).toEqual(['the answer']);
    expect(edits).toEqual(['platform-1: the answer']);
    expect(outcomes).toEqual(['delivered']);
    expect(
      logs.some(
        (l) => l.msg === 'reply not delivered; retrying (later replies of the thread wait behind it)',
      ),
    ).toBe(false);
  });
});
