import { redisClockReaches, redisTime, waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionRecords } from '../src/stores/session-records.js';
import type { ThreadQueue } from '../src/thread-queue.js';
import { claimNow, done, type QueueFixture, queueFixture } from './fixture.js';

let f: QueueFixture;
beforeAll(async () => {
  f = await queueFixture();
});
afterAll(() => f.close());

const IDLE_TTL_MS = 400;

/** The thread's own keys that an idle thread must not keep forever. */
function threadKeysOf(queue: ThreadQueue, thread: string): string[] {
  const k = queue.keys(thread);
  return [k.state, k.inbox, k.history, k.gate, k.session];
}

async function existing(keys: string[]): Promise<string[]> {
  const found: string[] = [];
  for (const key of keys) if ((await f.redis.exists(key)) === 1) found.push(key);
  return found;
}

describe('idle threads', () => {
  it('lose every key of theirs the configured time after their last turn', async () => {
    const { queue } = await f.make({ idleTtlMs: IDLE_TTL_MS });
    const sessions = new SessionRecords(f.redis, (thread) => queue.keys(thread), IDLE_TTL_MS);
    await queue.enqueue('th', { id: 'a', body: 'hello' });
    const claim = await claimNow(queue, 'th');
    if (claim.kind !== 'batch') throw new Error('no batch');
    await sessions.save('th', {
      sessionId: 's1',
      agent: 'agent',
      cwd: '/',
      generation: 0,
      worker: 'w',
      savedAt: 0,
    });
    expect(await queue.commit(claim.batch.lease, done)).toEqual({ kind: 'idle' });

    const keys = threadKeysOf(queue, 'th');
    expect(await existing(keys)).toEqual(keys);
    for (const key of keys) {
      const ttl = await f.redis.pttl(key);
      expect(ttl, key).toBeGreaterThan(0);
      expect(ttl, key).toBeLessThanOrEqual(IDLE_TTL_MS);
    }
    await waitFor(async () => (await existing(keys)).length === 0, {
      what: 'the idle thread’s keys to expire',
    });
    // Nothing left in the bucket indexes either.
    const k = queue.keys('th');
    expect(await f.redis.zscore(k.sched, k.member)).toBeNull();
    expect(await f.redis.zscore(k.run, k.member)).toBeNull();
  });

  it('never expire a buffered or in-flight message, however long it waits', async () => {
    const { queue } = await f.make({ idleTtlMs: IDLE_TTL_MS });
    const k = queue.keys('th');
    await queue.enqueue('th', { id: 'a', body: 'first' });
    const first = await claimNow(queue, 'th');
    if (first.kind !== 'batch') throw new Error('no batch');
    expect(await queue.commit(first.batch.lease, done)).toEqual({ kind: 'idle' });
    expect(await f.redis.pttl(k.state)).toBeGreaterThan(0);

    // A message to the idle thread makes it live again: in the inbox and then in flight, it stays.
    await queue.enqueue('th', { id: 'b', body: 'second' });
    expect(await f.redis.pttl(k.state)).toBe(-1);
    expect(await f.redis.pttl(k.inbox)).toBe(-1);
    const second = await claimNow(queue, 'th');
    if (second.kind !== 'batch') throw new Error('no batch');
    await queue.enqueue('th', { id: 'c', body: 'buffered behind it' });
    // Wait well past the idle time on Redis's clock: nothing of the thread may go.
    await redisClockReaches(f.redis, (await redisTime(f.redis)) + 3 * IDLE_TTL_MS, {
      what: 'three idle periods',
    });
    expect(await queue.state('th')).toMatchObject({ status: 'running', backlog: 2 });

    const next = await queue.commit(second.batch.lease, done);
    if (next.kind !== 'batch') throw new Error('the buffered message was not handed over');
    expect(next.batch.messages.map((m) => m.body)).toEqual(['buffered behind it']);
    expect(await queue.commit(next.batch.lease, done)).toEqual({ kind: 'idle' });
    expect(await f.redis.pttl(k.state)).toBeGreaterThan(0);
  });
});
