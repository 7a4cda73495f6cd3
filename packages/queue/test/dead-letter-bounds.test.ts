import type { LogSink } from '@tributary/observability';
import {
  deletePrefix,
  type RedisHandle,
  redisClockReaches,
  startRedis,
  uniquePrefix,
} from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisClient } from '../src/connections.js';
import { DeadRetention } from '../src/dead-retention.js';
import type { QueueConfig } from '../src/queue-config.js';
import { Store } from '../src/store.js';
import { keysOf } from '../src/testing.js';
import { bucketKeys } from '../src/thread-keys.js';
import { claimNow } from './fixture.js';

let server: RedisHandle;
const stores: Store[] = [];
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  for (const store of stores) {
    await deletePrefix(redisOf(store), store.config.prefix);
    await store.close();
  }
  await server.stop();
});

const redisOf = (store: Store) => (store as unknown as { redis: RedisClient }).redis;

function open(queue: Partial<QueueConfig>): Store {
  const store = Store.open({
    url: server.url,
    connection: { kind: 'patient' },
    queue: { prefix: uniquePrefix('dead'), buckets: 2, maxFailures: 1, ...queue },
  });
  stores.push(store);
  return store;
}

/** A message of `thread` whose one turn fails for good: a dead letter; its batch id. */
async function deadLetter(store: Store, thread: string, reason = 'agent crashed'): Promise<string> {
  await store.queue.intake.enqueue(thread, { id: `m-${Math.random()}`, body: 'poison' });
  const claim = await claimNow(store.queue, thread);
  if (claim.kind !== 'batch') throw new Error(`no batch: ${claim.kind}`);
  await store.queue.turns.fail(claim.batch.lease, reason);
  return claim.batch.id;
}

/** A reply of `thread` given up after the retry horizon: a dead reply; its id. */
async function deadReply(store: Store, thread: string, n: number): Promise<string> {
  await store.queue.intake.enqueue(thread, { id: `r-${n}`, body: 'question' });
  const claim = await claimNow(store.queue, thread);
  if (claim.kind !== 'batch') throw new Error(`no batch: ${claim.kind}`);
  const id = `${claim.batch.id}:reply`;
  await store.queue.turns.commit(claim.batch.lease, {
    reply: 'answer',
    stopReason: 'end_turn',
    outbound: [{ id, payload: '{"text":"answer"}' }],
  });
  expect(await store.replies.take(thread, 'deliverer', 5_000)).toMatchObject({ kind: 'reply' });
  expect(await store.replies.bury(thread, 'deliverer', id, `platform answered 503 for reply ${n}`)).toBe(
    true,
  );
  return id;
}

/** A log that keeps what it was told at warn. */
function warnings(): LogSink & { lines: { fields: object; message?: string }[] } {
  const lines: { fields: object; message?: string }[] = [];
  const ignore = () => {};
  return {
    lines,
    debug: ignore,
    info: ignore,
    warn: (fields, message) => lines.push({ fields, message }),
    error: ignore,
  };
}

describe('dead letters and dead replies are bounded', () => {
  it('keep at most deadMaxPerThread of a thread, the oldest dropped and counted, and say so once', async () => {
    const store = open({ deadMaxPerThread: 3 });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await deadLetter(store, 'th'));
    expect((await store.queue.admin.deadLetters('th')).map((d) => d.batchId)).toEqual(ids.slice(2));
    expect((await store.fleetStats()).dead.letters).toEqual({ held: 3, evicted: { ttl: 0, cap: 2 } });

    const log = warnings();
    const retention = new DeadRetention(store.queue.config, redisOf(store), log);
    expect(Object.fromEntries(await retention.runOnce())).toEqual({ 'letters:cap': 2 });
    expect(log.lines).toEqual([
      { fields: { evicted: { 'letters:cap': 2 } }, message: expect.stringContaining('dropped unhandled') },
    ]);
    // Reported once, whoever asks next; the running total stays for the metrics.
    expect((await new DeadRetention(store.queue.config, redisOf(store), log).runOnce()).size).toBe(0);
    expect((await store.fleetStats()).dead.letters.evicted).toEqual({ ttl: 0, cap: 2 });
  });

  it('keep at most their share of deadMax in each bucket, the oldest dropped and counted', async () => {
    const store = open({ deadMax: 4 });
    const threads = Array.from({ length: 12 }, (_, i) => `t-${i}`);
    const died = new Map<string, string>();
    for (const thread of threads) died.set(thread, await deadLetter(store, thread));
    const redis = redisOf(store);
    for (const bucket of [0, 1]) {
      expect(await redis.zcard(bucketKeys(store.config.prefix, bucket).deadindex)).toBeLessThanOrEqual(2);
    }
    const { held, evicted } = (await store.fleetStats()).dead.letters;
    expect(held).toBeLessThanOrEqual(4);
    expect(evicted).toEqual({ ttl: 0, cap: threads.length - held });
    // In each bucket the newest stay: the last threads of the bucket that died.
    for (const bucket of [0, 1]) {
      const inBucket = threads.filter((thread) => keysOf(store.queue, thread).bucket === bucket);
      const kept = inBucket.slice(-2);
      for (const thread of inBucket) {
        const letters = (await store.queue.admin.deadLetters(thread)).map((d) => d.batchId);
        expect(letters).toEqual(kept.includes(thread) ? [died.get(thread)] : []);
      }
    }
  });

  it('drop what outlived deadTtlMs at the next write in the bucket, or at the periodic trim, counted', async () => {
    const store = open({ buckets: 1, deadTtlMs: 400 });
    const redis = redisOf(store);
    await deadLetter(store, 'a');
    await deadLetter(store, 'b');
    const [died] = await store.queue.admin.deadLetters('b');
    await redisClockReaches(redis, died!.deadAt + 401, { what: 'the dead letters to outlive their TTL' });
    await deadLetter(store, 'c');
    expect(await store.queue.admin.deadLetters('a')).toEqual([]);
    expect(await store.queue.admin.deadLetters('b')).toEqual([]);
    const [kept] = await store.queue.admin.deadLetters('c');
    expect((await store.fleetStats()).dead.letters).toEqual({ held: 1, evicted: { ttl: 2, cap: 0 } });
    expect((await store.listing.summary()).deadLetterReasons).toEqual([
      { reason: 'agent crashed', count: 1 },
    ]);

    await redisClockReaches(redis, kept!.deadAt + 401, { what: 'the last dead letter to outlive its TTL' });
    const retention = new DeadRetention(store.queue.config, redis, warnings());
    expect(Object.fromEntries(await retention.runOnce())).toEqual({ 'letters:ttl': 3 });
    expect(await store.queue.admin.deadLetters('c')).toEqual([]);
    expect((await store.listing.summary()).deadLetterReasons).toEqual([]);
    expect((await store.listing.deadLetters(undefined, 10)).items).toEqual([]);
  });

  it('bound dead replies alike, apart from dead letters', async () => {
    const store = open({ deadMaxPerThread: 2 });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await deadReply(store, 'th', i));
    await deadLetter(store, 'th');
    expect((await store.replies.dead('th')).map((reply) => reply.id)).toEqual(ids.slice(1));
    const { dead } = await store.fleetStats();
    expect(dead).toEqual({
      letters: { held: 1, evicted: { ttl: 0, cap: 0 } },
      replies: { held: 2, evicted: { ttl: 0, cap: 1 } },
    });
    expect((await store.listing.summary()).deadReplyReasons).toEqual([
      { reason: 'platform answered <n> for reply <n>', count: 2 },
    ]);
  });
});
