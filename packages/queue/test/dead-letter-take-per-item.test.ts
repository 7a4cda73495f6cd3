import { deletePrefix, type RedisHandle, startRedis, uniquePrefix, waitFor } from '@tributary/testkit';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisClient } from '../src/connections.js';
import { Store } from '../src/store.js';
import { bucketKeys } from '../src/thread-keys.js';
import { claimNow } from './fixture.js';

const HELD = 300;

let server: RedisHandle;
let store: Store;
let redis: RedisClient;
beforeAll(async () => {
  server = await startRedis({ private: true });
  store = Store.open({
    url: server.url,
    connection: { kind: 'patient' },
    queue: { prefix: uniquePrefix('take'), buckets: 1, maxFailures: 1 },
  });
  redis = (store as unknown as { redis: RedisClient }).redis;
});
afterAll(async () => {
  await deletePrefix(redis, store.config.prefix);
  await store.close();
  await server.stop();
});

/** Dead-letters `count` one-message batches of `thread`; their batch ids, oldest first. */
async function deadLetters(thread: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    await store.queue.intake.enqueue(thread, { id: `m-${i}`, body: `poison ${i}` });
    const claim = await claimNow(store.queue, thread);
    if (claim.kind !== 'batch') throw new Error(`no batch: ${claim.kind}`);
    await store.queue.turns.fail(claim.batch.lease, `agent process ${1000 + i} exited with code 1`);
    ids.push(claim.batch.id);
  }
  return ids;
}

/** The commands the scripts run while `act` runs, each as [name, key], read with MONITOR. */
async function scriptCommands(act: () => Promise<unknown>): Promise<[string, string][]> {
  const client = new Redis(server.url, { lazyConnect: true, enableReadyCheck: false });
  const monitor = await client.monitor();
  const seen: [string, string][] = [];
  let done = false;
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (args[0] === 'ping') done = true;
    else if (source === 'lua') seen.push([args[0]!.toLowerCase(), args[1] ?? '']);
  });
  await act();
  // MONITOR reports asynchronously: a marker after the act says every command before it arrived.
  await redis.ping();
  await waitFor(() => done, { what: 'the monitor to catch up' });
  monitor.disconnect();
  client.disconnect();
  return seen;
}

/** Commands that read or write one item of a set (no range, no whole key). */
const PER_ITEM = new Set(['exists', 'hget', 'hdel', 'hincrby', 'zrem', 'zadd', 'hset']);

describe('a re-drive or discard of a dead letter or dead reply', () => {
  it('touches only that item of the dead set, however many its thread holds', async () => {
    const ids = await deadLetters('busy', HELD);
    const dead = bucketKeys(store.config.prefix, 0);
    const onDeadKeys = (commands: [string, string][]) =>
      commands.filter(([, key]) => key.includes(':deadletters') || key.includes(':dead'));

    const discard = await scriptCommands(() => store.admin.discard('busy', ids[HELD / 2]!));
    const redrive = await scriptCommands(() => store.admin.redrive('busy', ids[0]!));
    for (const commands of [discard, redrive]) {
      const names = onDeadKeys(commands).map(([name]) => name);
      expect(names.length).toBeGreaterThan(0);
      expect(names.filter((name) => !PER_ITEM.has(name))).toEqual([]);
    }
    expect(await redis.zcard(dead.deadindex)).toBe(HELD - 2);

    // A bulk discard of all of them: a few commands each, as many for the first as for the last, and
    // nothing of them left.
    const rest = ids.filter((_, i) => i !== 0 && i !== HELD / 2);
    const counts: number[] = [];
    for (const id of rest) {
      const commands = await scriptCommands(() => store.admin.discard('busy', id));
      counts.push(onDeadKeys(commands).length);
    }
    expect(Math.max(...counts)).toBeLessThanOrEqual(10);
    // The last one also deletes its class's count, now 0.
    expect(counts.at(-1)).toBe(counts[0]! + 1);
    expect(await store.queue.admin.deadLetters('busy')).toEqual([]);
    expect(await store.listing.summary()).toMatchObject({ deadLetters: 0, deadLetterReasons: [] });
    for (const key of [
      dead.deadindex,
      dead.deadrecords,
      dead.deadthreads,
      dead.deadclassof,
      dead.deadclasses,
    ]) {
      expect(await redis.exists(key)).toBe(0);
    }
  });

  it('of a dead reply touches only that item too', async () => {
    await store.queue.intake.enqueue('replies', { id: 'q', body: 'question' });
    const claim = await claimNow(store.queue, 'replies');
    if (claim.kind !== 'batch') throw new Error(`no batch: ${claim.kind}`);
    const outbound = Array.from({ length: 50 }, (_, i) => ({ id: `reply-${i}`, payload: '{}' }));
    await store.queue.turns.commit(claim.batch.lease, { reply: 'r', stopReason: 'end_turn', outbound });
    for (const { id } of outbound) {
      await store.replies.take('replies', 'deliverer', 5_000);
      await store.replies.bury('replies', 'deliverer', id, 'platform down');
    }
    const commands = await scriptCommands(() => store.admin.discardReply('replies', 'reply-25'));
    const names = commands.filter(([, key]) => key.includes(':dead')).map(([name]) => name);
    expect(names.length).toBeGreaterThan(0);
    expect(names.filter((name) => !PER_ITEM.has(name))).toEqual([]);
    expect(await store.replies.dead('replies')).toHaveLength(49);
  });
});
