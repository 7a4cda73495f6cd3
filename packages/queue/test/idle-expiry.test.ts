import { redisClockReaches, redisTime } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatchHistory } from '../src/stores/batch-history.js';
import { MessageReceipts } from '../src/stores/message-receipts.js';
import { ThreadParentStore } from '../src/stores/thread-parents.js';
import { keysOf } from '../src/testing.js';
import type { ThreadQueue } from '../src/threads/thread-queue.js';
import { claimNow, done, type QueueFixture, queueFixture } from './fixture.js';

let f: QueueFixture;
beforeAll(async () => {
  f = await queueFixture();
});
afterAll(() => f.close());

const IDLE_TTL_MS = 400;

const receipts = (queue: ThreadQueue) =>
  new MessageReceipts(
    f.redis,
    (thread) => keysOf(queue, thread),
    new BatchHistory(f.redis, (thread) => keysOf(queue, thread), queue.config.historyLimit),
  );

/** Every key of the thread that exists now (all of a thread's keys share its `:t:<member>:` stem). */
async function keysOfThread(queue: ThreadQueue, thread: string): Promise<string[]> {
  const stem = keysOf(queue, thread).state.replace(/state$/, '');
  const found: string[] = [];
  // EXISTS expires a key whose time has come; KEYS alone may still list it.
  for (const key of await f.redis.keys(`${stem}*`)) {
    if ((await f.redis.exists(key)) === 1) found.push(key);
  }
  return found.sort();
}

describe('idle threads', () => {
  it('lose every key of theirs the configured time after their last turn', async () => {
    const { queue } = await f.make({ idleTtlMs: IDLE_TTL_MS });
    const parents = new ThreadParentStore(f.redis, (thread) => keysOf(queue, thread), IDLE_TTL_MS);
    await parents.set('th', 'none');
    await queue.intake.enqueue('th', { id: 'a', body: 'hello' });
    expect(
      await queue.intake.revise('th', {
        action: 'edit',
        messageId: 'a',
        body: 'hello!',
        idempotencyKey: 'e1',
      }),
    ).toBe('applied');
    await queue.intake.noteRefusal('th', 'x', 'not-addressed');
    const claim = await claimNow(queue, 'th');
    if (claim.kind !== 'batch') throw new Error('no batch');
    const session = { sessionId: 's1', agent: 'agent', cwd: '/', generation: 0 };
    expect(await queue.turns.commit(claim.batch.lease, { ...done, session })).toEqual({ kind: 'idle' });

    const k = keysOf(queue, 'th');
    const kept = await keysOfThread(queue, 'th');
    // The dedup index (the message's key and the edit's), receipts, gate: not only the state and streams.
    expect(kept).toEqual(
      [
        k.state,
        k.inbox,
        k.history,
        k.gate,
        k.session,
        k.parent,
        k.receipts,
        k.receiptOrder,
        k.dedup,
        k.dedupUntil,
      ].sort(),
    );
    for (const key of kept) {
      const ttl = await f.redis.pttl(key);
      expect(ttl, key).toBeGreaterThan(0);
      expect(ttl, key).toBeLessThanOrEqual(IDLE_TTL_MS);
    }
    await redisClockReaches(f.redis, (await redisTime(f.redis)) + IDLE_TTL_MS + 1, {
      what: 'the idle time',
    });
    expect(await keysOfThread(queue, 'th')).toEqual([]);
    // Nothing left in the bucket indexes either.
    expect(await f.redis.zscore(k.sched, k.member)).toBeNull();
    expect(await f.redis.zscore(k.run, k.member)).toBeNull();
  });

  it('start over as new threads once every key expired, their first message read from the start', async () => {
    const { queue } = await f.make({ idleTtlMs: IDLE_TTL_MS });
    await queue.intake.enqueue('th', { id: 'a', body: 'first life' });
    const first = await claimNow(queue, 'th');
    if (first.kind !== 'batch') throw new Error('no batch');
    expect(await queue.turns.commit(first.batch.lease, done)).toEqual({ kind: 'idle' });
    await redisClockReaches(f.redis, (await redisTime(f.redis)) + IDLE_TTL_MS + 1, {
      what: 'the idle time',
    });
    expect(await keysOfThread(queue, 'th')).toEqual([]);

    // The enqueue skips the reads a thread without keys cannot need; what it writes must match them.
    expect(await queue.intake.enqueue('th', { id: 'b', body: 'second life' })).toMatchObject({
      outcome: 'accepted',
      seq: 1,
      rang: true,
    });
    expect(await queue.intake.enqueue('th', { id: 'b', body: 'second life' })).toMatchObject({
      outcome: 'duplicate',
    });
    await queue.intake.enqueue('th', {
      id: 'a',
      idempotencyKey: 'a@edit',
      body: 'first life, edited',
      edit: true,
    });
    expect(await receipts(queue).receipt('th', 'b')).toMatchObject({ status: 'queued' });
    expect(await receipts(queue).receipt('th', 'a')).toMatchObject({ status: 'queued' });
    const second = await claimNow(queue, 'th');
    if (second.kind !== 'batch') throw new Error('no batch');
    expect(second.batch.messages.map((m) => m.body)).toEqual(['second life', 'first life, edited']);
    // The commit is checked against the fence the claim wrote with the batch.
    expect(await queue.turns.commit(second.batch.lease, done)).toEqual({ kind: 'idle' });
  });

  it('live again when a dead letter is re-driven after they expired, and keep it until it runs', async () => {
    const { queue } = await f.make({ idleTtlMs: IDLE_TTL_MS, maxFailures: 1 });
    await queue.intake.enqueue('th', { id: 'a', body: 'poison' });
    const claim = await claimNow(queue, 'th');
    if (claim.kind !== 'batch') throw new Error('no batch');
    expect((await queue.turns.fail(claim.batch.lease, 'boom')).kind).toBe('idle');
    const [dead] = await queue.admin.deadLetters('th');
    const k = keysOf(queue, 'th');
    const goneAt = (await redisTime(f.redis)) + IDLE_TTL_MS + 50;
    await redisClockReaches(f.redis, goneAt, { what: "the idle thread's keys to expire" });
    expect(await f.redis.exists(k.state, k.inbox)).toBe(0);

    expect(await queue.admin.redrive('th', dead!.batchId)).toBe(1);
    // Waiting past the idle time again: a re-driven message, like any buffered one, does not expire.
    await redisClockReaches(f.redis, (await redisTime(f.redis)) + IDLE_TTL_MS + 50, {
      what: 'the idle time',
    });
    expect(await f.redis.pttl(k.state)).toBe(-1);
    expect(await f.redis.pttl(k.inbox)).toBe(-1);
    const again = await claimNow(queue, 'th');
    if (again.kind !== 'batch') throw new Error(`no batch: ${again.kind}`);
    expect(again.batch.messages.map((m) => [m.id, m.body])).toEqual([['a', 'poison']]);
    expect(await queue.turns.commit(again.batch.lease, done)).toEqual({ kind: 'idle' });
  });

  it('keep a refusal written before their first message once that message is buffered', async () => {
    const { queue } = await f.make({ idleTtlMs: IDLE_TTL_MS });
    const k = keysOf(queue, 'th');
    // A receipt written with no state to keep it alive expires on its own...
    await queue.intake.noteRefusal('th', 'early', 'not-addressed');
    expect(await f.redis.pttl(k.receipts)).toBeGreaterThan(0);
    // ...until the thread holds a message: then nothing of it expires, its first message's receipt
    // and this one alike.
    await queue.intake.enqueue('th', { id: 'a', body: 'first' });
    for (const key of [k.state, k.inbox, k.gate, k.receipts, k.receiptOrder]) {
      expect(await f.redis.pttl(key), key).toBe(-1);
    }
  });

  it('never expire a buffered or in-flight message, however long it waits', async () => {
    const { queue } = await f.make({ idleTtlMs: IDLE_TTL_MS });
    const k = keysOf(queue, 'th');
    await queue.intake.enqueue('th', { id: 'a', body: 'first' });
    const first = await claimNow(queue, 'th');
    if (first.kind !== 'batch') throw new Error('no batch');
    expect(await queue.turns.commit(first.batch.lease, done)).toEqual({ kind: 'idle' });
    expect(await f.redis.pttl(k.state)).toBeGreaterThan(0);

    // A message to the idle thread makes it live again: in the inbox and then in flight, it stays.
    await queue.intake.enqueue('th', { id: 'b', body: 'second' });
    expect(await f.redis.pttl(k.state)).toBe(-1);
    expect(await f.redis.pttl(k.inbox)).toBe(-1);
    const second = await claimNow(queue, 'th');
    if (second.kind !== 'batch') throw new Error('no batch');
    await queue.intake.enqueue('th', { id: 'c', body: 'buffered behind it' });
    // Wait well past the idle time on Redis's clock: nothing of the thread may go but its dedup
    // windows, which are at most the idle time long.
    await redisClockReaches(f.redis, (await redisTime(f.redis)) + 3 * IDLE_TTL_MS, {
      what: 'three idle periods',
    });
    expect(await queue.admin.state('th')).toMatchObject({ status: 'running', backlog: 2 });
    for (const key of [k.state, k.inbox, k.history, k.gate, k.receipts, k.receiptOrder]) {
      expect(await f.redis.pttl(key), key).toBe(-1);
    }
    const left = await keysOfThread(queue, 'th');
    expect(left).not.toContain(k.dedup);
    expect(left).not.toContain(k.dedupUntil);
    // Its receipt still finds the buffered message.
    expect(
      await queue.intake.revise('th', {
        action: 'edit',
        messageId: 'c',
        body: 'edited',
        idempotencyKey: 'e',
      }),
    ).toBe('applied');

    const next = await queue.turns.commit(second.batch.lease, done);
    if (next.kind !== 'batch') throw new Error('the buffered message was not handed over');
    expect(next.batch.messages.map((m) => m.body)).toEqual(['edited']);
    expect(await queue.turns.commit(next.batch.lease, done)).toEqual({ kind: 'idle' });
    for (const key of await keysOfThread(queue, 'th')) {
      expect(await f.redis.pttl(key), key).toBeGreaterThan(0);
    }
  });
});
