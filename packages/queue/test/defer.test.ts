import { redisClockReaches, redisTime } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Outbound } from '../src/batch.js';
import { LeaseLostError } from '../src/errors.js';
import { deadBounds } from '../src/queue-config.js';
import { ReplyOutbox } from '../src/stores/reply-outbox.js';
import { keysOf } from '../src/testing.js';
import type { ThreadQueue } from '../src/threads/thread-queue.js';
import { claimNow, done, enqueueAll, type QueueFixture, queueFixture } from './fixture.js';

let f: QueueFixture;
beforeAll(async () => {
  f = await queueFixture();
});
afterAll(() => f.close());

const notice: Outbound[] = [{ id: 'notice-1', payload: '{"text":"the agent is slow to start"}' }];
const putBack = { reachedAgent: false, notice, noticeAfterMs: 60_000 };

async function claimed(queue: ThreadQueue, thread: string, owner = 'owner-a') {
  const claim = await claimNow(queue, thread, owner);
  if (claim.kind !== 'batch') throw new Error(`expected a batch, got ${claim.kind}`);
  return claim.batch;
}

const pending = (queue: ThreadQueue, thread: string) =>
  new ReplyOutbox(f.redis, (t) => keysOf(queue, t), deadBounds(queue.config)).pending(thread);

describe('a batch whose agent did not start is put back, not failed', () => {
  it('goes back with a doubling delay, never counts as a failure or a delivery, and is never dead-lettered', async () => {
    const { queue } = await f.make({
      maxFailures: 2,
      maxDeliveries: 2,
      deferDelayMs: 10,
      deferMaxDelayMs: 40,
    });
    await enqueueAll(queue, 'th', ['hello', 'and this']);
    const first = await claimed(queue, 'th');
    const delays = [(await queue.turns.defer(first.lease, putBack)).delayMs];
    // Far more deferrals than failures or deliveries allow a batch.
    for (let i = 0; i < 5; i++) {
      const batch = await claimed(queue, 'th');
      expect(batch.id).toBe(first.id);
      // No agent saw it: it is not a continuation, and its next run may use the thread's session.
      expect(batch.deliveries).toBe(1);
      expect(batch.type).toBe('UserRequest');
      delays.push((await queue.turns.defer(batch.lease, putBack)).delayMs);
    }
    expect(delays).toEqual([10, 20, 40, 40, 40, 40]);
    expect((await queue.admin.state('th')).status).toBe('scheduled');
    const last = await claimed(queue, 'th');
    expect(last.messages.map((m) => m.id)).toEqual(['m1', 'm2']);
    expect(await queue.turns.commit(last.lease, done)).toEqual({ kind: 'idle' });
    expect(await queue.admin.deadLetters('th')).toEqual([]);
    expect((await queue.admin.history('th')).map((r) => r.status)).toEqual(['complete']);
  });

  it('counts the delivery when a prompt of it reached an agent (a repair whose fresh start failed)', async () => {
    const { queue } = await f.make();
    await enqueueAll(queue, 'th', ['hello']);
    const batch = await claimed(queue, 'th');
    await queue.turns.defer(batch.lease, { ...putBack, reachedAgent: true });
    const again = await claimed(queue, 'th');
    expect(again.deliveries).toBe(2);
    expect(again.type).toBe('Continuation');
  });

  it('tells the thread once, when the batch has waited noticeAfterMs since it was first put back', async () => {
    const { queue } = await f.make({ deferDelayMs: 1 });
    await enqueueAll(queue, 'th', ['hello']);
    const first = await queue.turns.defer((await claimed(queue, 'th')).lease, {
      ...putBack,
      noticeAfterMs: 150,
    });
    expect(first).toMatchObject({ waitedMs: 0, noticed: false });
    await redisClockReaches(f.redis, (await redisTime(f.redis)) + 150);
    const second = await queue.turns.defer((await claimed(queue, 'th')).lease, {
      ...putBack,
      noticeAfterMs: 150,
    });
    expect(second.noticed).toBe(true);
    expect(second.waitedMs).toBeGreaterThanOrEqual(150);
    const third = await queue.turns.defer((await claimed(queue, 'th')).lease, {
      ...putBack,
      noticeAfterMs: 150,
    });
    expect(third.noticed).toBe(false);
    expect((await pending(queue, 'th')).map((reply) => reply.id)).toEqual(['notice-1']);
  });

  it('counts the wait from when it began, when that was before its first put-back, and only once', async () => {
    const { queue } = await f.make({ deferDelayMs: 1 });
    await enqueueAll(queue, 'th', ['hello']);
    const batch = await claimed(queue, 'th');
    // It waited 150 ms in its route's line before its first put-back: told at once.
    const began = batch.messages[0]!.acceptedAt;
    await redisClockReaches(f.redis, began + 150);
    const first = await queue.turns.defer(batch.lease, {
      ...putBack,
      noticeAfterMs: 150,
      waitingSince: began,
    });
    expect(first.noticed).toBe(true);
    expect(first.waitedMs).toBeGreaterThanOrEqual(150);

    // A later put-back of the same batch keeps counting from its start, not from its messages again.
    await enqueueAll(queue, 'other', ['hello']);
    const other = await claimed(queue, 'other');
    const since = other.messages[0]!.acceptedAt;
    const once = await queue.turns.defer(other.lease, {
      ...putBack,
      noticeAfterMs: 60_000,
      waitingSince: since,
    });
    expect(once).toMatchObject({ noticed: false });
    expect(once.waitedMs).toBeLessThan(60_000);
    const twice = await queue.turns.defer((await claimed(queue, 'other')).lease, {
      ...putBack,
      noticeAfterMs: 60_000,
      waitingSince: since - 120_000,
    });
    expect(twice.noticed).toBe(false);
  });

  it('lets the worker that put a batch back give its notice while nobody tries it, and only then', async () => {
    const { queue } = await f.make({ deferDelayMs: 60_000 });
    await enqueueAll(queue, 'th', ['hello']);
    const batch = await claimed(queue, 'th');
    // Still running: the one trying it tells the thread itself if it has to.
    expect(await queue.turns.noticeDeferred('th', batch.id, notice)).toBe(false);
    await queue.turns.defer(batch.lease, putBack);
    expect(await queue.turns.noticeDeferred('th', 'some-other-batch', notice)).toBe(false);
    expect(await queue.turns.noticeDeferred('th', batch.id, notice)).toBe(true);
    expect(await queue.turns.noticeDeferred('th', batch.id, notice)).toBe(false);
    // The batch is answered later: no notice for it again.
    const again = await claimed(queue, 'th');
    await queue.turns.commit(again.lease, done);
    expect(await queue.turns.noticeDeferred('th', batch.id, notice)).toBe(false);
    expect(await pending(queue, 'th')).toHaveLength(1);
  });

  it('refuses a holder whose lease another worker took over', async () => {
    const { queue } = await f.make({ leaseMs: 3_000 });
    await enqueueAll(queue, 'th', ['hello']);
    const batch = await claimed(queue, 'th');
    await f.leaseExpiry(batch.lease);
    await claimed(queue, 'th', 'owner-b');
    await expect(queue.turns.defer(batch.lease, putBack)).rejects.toBeInstanceOf(LeaseLostError);
  });
});
