import { deletePrefix, type RedisHandle, startRedis, uniquePrefix } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../src/store.js';
import { BadCursorError, type Page } from '../src/stores/fleet-listing.js';
import { keysOf } from '../src/testing.js';
import { bucketKeys, encodeThread } from '../src/thread-keys.js';
import { claimNow, done, enqueueAll } from './fixture.js';

let server: RedisHandle;
const stores: Store[] = [];
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  for (const store of stores) {
    await deletePrefix(
      (store as unknown as { redis: Parameters<typeof deletePrefix>[0] }).redis,
      store.config.prefix,
    );
    await store.close();
  }
  await server.stop();
});

function open(queue: Parameters<typeof Store.open>[0]['queue'] = {}): Store {
  const store = Store.open({
    url: server.url,
    connection: { kind: 'patient' },
    queue: { prefix: uniquePrefix('list'), buckets: 8, maxFailures: 1, ...queue },
  });
  stores.push(store);
  return store;
}

/** Every item of a list, following its cursors; the pages' sizes too. */
async function all<T>(read: (cursor: string | undefined) => Promise<Page<T>>) {
  const items: T[] = [];
  const sizes: number[] = [];
  let cursor: string | undefined;
  do {
    const page = await read(cursor);
    items.push(...page.items);
    sizes.push(page.items.length);
    cursor = page.next;
  } while (cursor !== undefined);
  return { items, sizes };
}

describe('the operators lists', () => {
  it('lists threads by state with owner, lease, backlog and since', async () => {
    const store = open({ retryDelayMs: 60_000, maxFailures: 3 });
    const { queue, listing } = store;
    await enqueueAll(queue, 'running', ['a']);
    const running = await claimNow(queue, 'running', 'worker-1');
    if (running.kind !== 'batch') throw new Error('no batch');
    await enqueueAll(queue, 'running', ['b'], 2);
    await enqueueAll(queue, 'runnable', ['a']);
    await enqueueAll(queue, 'retrying', ['a']);
    const failing = await claimNow(queue, 'retrying');
    if (failing.kind !== 'batch') throw new Error('no batch');
    await queue.turns.fail(failing.batch.lease, 'try again later');
    await enqueueAll(queue, 'idle', ['a']);
    const idle = await claimNow(queue, 'idle');
    if (idle.kind !== 'batch') throw new Error('no batch');
    await queue.turns.commit(idle.batch.lease, done);
    await enqueueAll(queue, 'paused', ['a']);
    const paused = await claimNow(queue, 'paused');
    if (paused.kind !== 'batch') throw new Error('no batch');
    await queue.turns.commit(paused.batch.lease, done);
    await store.admin.pause('paused');
    await enqueueAll(queue, 'paused', ['b'], 2);

    const names = async (state: Parameters<typeof listing.threads>[0]) =>
      (await listing.threads(state, undefined, 10)).items.map((row) => row.thread);
    expect(await names('running')).toEqual(['running']);
    expect(await names('runnable')).toEqual(['runnable']);
    expect(await names('scheduled')).toEqual(['retrying']);
    expect(await names('paused')).toEqual(['paused']);
    expect(await names('idle')).toEqual(['idle']);
    expect((await names('all')).sort()).toEqual(['idle', 'paused', 'retrying', 'runnable', 'running']);

    const [row] = (await listing.threads('running', undefined, 10)).items;
    expect(row).toMatchObject({
      status: 'running',
      owner: 'worker-1',
      batchId: running.batch.id,
      backlog: 2,
      leaseExpiresAt: running.batch.lease.expiresAt,
      paused: false,
    });
    const [waiting] = (await listing.threads('paused', undefined, 10)).items;
    expect(waiting).toMatchObject({ status: 'idle', paused: true, backlog: 1 });

    expect(await listing.summary()).toMatchObject({
      running: 1,
      runnable: 1,
      scheduled: 1,
      paused: 1,
      active: 5,
    });
  });

  it('pages through every thread once, in order, whatever the page size', async () => {
    const { queue, listing } = open();
    const threads = Array.from({ length: 25 }, (_, i) => `t-${i}`);
    for (const thread of threads) await enqueueAll(queue, thread, ['x']);
    for (const limit of [1, 5, 10, 25, 100]) {
      const { items, sizes } = await all((cursor) => listing.threads('runnable', cursor, limit));
      expect(items.map((row) => row.thread).sort()).toEqual([...threads].sort());
      expect(Math.max(...sizes)).toBeLessThanOrEqual(limit);
      // Oldest scheduled first.
      expect(items.map((row) => row.since)).toEqual([...items.map((row) => row.since)].sort((a, b) => a - b));
    }
    // A page size that divides the list exactly ends with no cursor, not an empty page.
    expect((await all((cursor) => listing.threads('runnable', cursor, 5))).sizes).toEqual([5, 5, 5, 5, 5]);
    expect(await listing.threads('running', undefined, 10)).toEqual({ items: [], next: undefined });
    await expect(listing.threads('runnable', 'not-a-cursor', 10)).rejects.toBeInstanceOf(BadCursorError);
  });

  it('resumes after a cursor among members that share its score, across buckets', async () => {
    const store = open();
    const { queue, listing } = store;
    const threads = Array.from({ length: 30 }, (_, i) => `tie-${String(i).padStart(2, '0')}`);
    for (const thread of threads) await enqueueAll(queue, thread, ['x']);
    // The same score for all of them: only the member orders them.
    const redis = (store as unknown as { redis: import('ioredis').Redis }).redis;
    for (const thread of threads) {
      const k = keysOf(queue, thread);
      await redis.zadd(k.sched, 1_000, k.member);
    }
    const { items } = await all((cursor) => listing.threads('runnable', cursor, 7));
    expect(items.map((row) => row.thread)).toEqual(threads.map(encodeThread).sort().map(decodeURIComponent));
  });

  it('lists dead letters newest first, grouped and filtered by reason, and forgets discarded ones', async () => {
    const { queue, listing, admin } = open();
    for (const [thread, reason] of [
      ['a', 'agent crashed'],
      ['b', 'agent crashed'],
      ['c', 'timed out'],
    ] as const) {
      await enqueueAll(queue, thread, ['poison']);
      const claim = await claimNow(queue, thread);
      if (claim.kind !== 'batch') throw new Error('no batch');
      await queue.turns.fail(claim.batch.lease, reason);
    }
    const page = await listing.deadLetters(undefined, 10);
    expect(page.items.map((row) => [row.thread, row.reason, row.messages])).toEqual([
      ['c', 'timed out', 1],
      ['b', 'agent crashed', 1],
      ['a', 'agent crashed', 1],
    ]);
    expect((await listing.summary()).deadLetterReasons).toEqual([
      { reason: 'agent crashed', count: 2 },
      { reason: 'timed out', count: 1 },
    ]);
    const crashed = await listing.deadLetters(undefined, 10, 'agent crashed');
    expect(crashed.items.map((row) => row.thread)).toEqual(['b', 'a']);

    const [first] = page.items;
    expect(await admin.discard(first!.thread, first!.batchId)).toBe(1);
    expect(await admin.discard(first!.thread, first!.batchId)).toBeUndefined();
    expect(await queue.admin.deadLetters('c')).toEqual([]);
    expect((await listing.summary()).deadLetterReasons).toEqual([{ reason: 'agent crashed', count: 2 }]);
    expect((await listing.deadLetters(undefined, 10)).items).toHaveLength(2);
  });

  it('pages through entries crowded in one bucket and spread over the others alike', async () => {
    const { queue, listing } = open();
    const died: string[] = [];
    for (const thread of [...Array(20).fill('crowded'), 'a', 'b', 'c', 'crowded', 'd']) {
      await enqueueAll(queue, thread, ['poison'], died.length);
      const claim = await claimNow(queue, thread);
      if (claim.kind !== 'batch') throw new Error('no batch');
      await queue.turns.fail(claim.batch.lease, 'agent crashed');
      died.push(claim.batch.id);
    }
    const whole = (await listing.deadLetters(undefined, 100)).items.map((row) => row.batchId);
    expect([...whole].sort()).toEqual([...died].sort());
    for (const limit of [1, 3, 7, 25]) {
      const { items, sizes } = await all((cursor) => listing.deadLetters(cursor, limit));
      expect(items.map((row) => row.batchId)).toEqual(whole);
      expect(Math.max(...sizes)).toBeLessThanOrEqual(limit);
    }
  });

  it('finds a message by its platform id in every thread that took one by that id', async () => {
    const store = open();
    const { queue, listing } = store;
    await queue.intake.enqueue('chat-1', { id: '42', body: 'in one chat' });
    await queue.intake.enqueue('chat-2', { id: '42', body: 'in another' });
    await queue.intake.enqueue('chat-2', { id: '42/7', body: 'an id with a slash' });
    await queue.intake.enqueue('chat-3', { id: '420', body: 'a longer id' });
    const found = await listing.findMessage('42');
    expect(found.map((receipt) => [receipt.thread, receipt.status]).sort()).toEqual([
      ['chat-1', 'queued'],
      ['chat-2', 'queued'],
    ]);
    expect((await listing.findMessage('42/7')).map((r) => r.thread)).toEqual(['chat-2']);
    expect(await listing.findMessage('43')).toEqual([]);
    // A paused thread says so in its waiting messages' receipts.
    await store.admin.pause('chat-1');
    expect(await store.admin.receipt('chat-1', '42')).toMatchObject({ status: 'queued', paused: true });
    const { receiptids } = bucketKeys(store.config.prefix, keysOf(queue, 'chat-1').bucket);
    expect(receiptids).toBe(keysOf(queue, 'chat-1').receiptids);
  });
});
