import { silentLogger } from '@tributary/observability';
import {
  type RedisClusterHandle,
  startRedis,
  startRedisCluster,
  uniquePrefix,
  waitFor,
} from '@tributary/testkit';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterSlot } from '../src/cluster-slot.js';
import type { RedisClient } from '../src/connections.js';
import { DeadRetention } from '../src/dead-retention.js';
import { RedisTopologyError } from '../src/errors.js';
import { isRedisUnavailable } from '../src/redis-unavailable.js';
import { Store } from '../src/store.js';
import { threadKeys } from '../src/thread-keys.js';
import { doorbellPrefix } from '../src/wake/doorbell.js';
import { LINE_QUANTUM } from '../src/wake/route-lines.js';

let cluster: RedisClusterHandle;
beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);
afterAll(() => cluster?.stop());

const seed = () => new Redis(cluster.nodes[0]!.url);
const redisOf = (store: Store) => (store as unknown as { redis: RedisClient }).redis;

describe('on a Redis Cluster', () => {
  it('computes the slot of a key as the cluster does, hash tag included', async () => {
    const redis = seed();
    const keys = [
      'plain',
      '',
      '{}empty-tag',
      'a{b}c{d}',
      threadKeys('trib', 64, 'slack:C1:1700000000.1').inbox,
      'émoji-🚀',
      ...Array.from({ length: 8 }, (_, i) => doorbellPrefix('trib', i, 8)),
    ];
    for (const key of keys) expect(clusterSlot(key), key).toBe(await redis.cluster('KEYSLOT', key));
    redis.disconnect();
  });

  it('puts one doorbell queue on each primary of an evenly split cluster', async () => {
    const client = new Cluster([{ host: '127.0.0.1', port: cluster.nodes[0]!.port }]);
    const slots = await client.cluster('SLOTS');
    const ownerOf = (key: string) => {
      const slot = clusterSlot(key);
      return slots.find(([low, high]) => slot >= low && slot <= high)![2]![1];
    };
    const owners = [0, 1, 2].map((i) => ownerOf(`${doorbellPrefix('trib', i, 3)}:doorbell:wait`));
    expect(new Set(owners).size).toBe(3);
    client.disconnect();
  });

  it('runs a thread through enqueue, claim and commit, and reads fleet figures across primaries', async () => {
    const store = Store.open({
      url: cluster.url,
      connection: { kind: 'patient' },
      queue: { prefix: uniquePrefix('cl'), buckets: 8, doorbellQueues: 3 },
    });
    await store.ready();
    // All twelve are the default route's: weighed so, its line lets them all into the queue at once.
    await store.routeLines.publishWeights(new Map([['default', 12 / LINE_QUANTUM]]));
    const threads = Array.from({ length: 12 }, (_, i) => `slack:C${i}:t${i}`);
    for (const thread of threads) {
      expect(await store.queue.intake.enqueue(thread, { id: 'm1', body: 'hi' })).toMatchObject({
        rang: true,
      });
    }
    expect(await store.fleetStats()).toMatchObject({ runnable: 12, running: 0, backlog: 12 });
    // Each ring went to the queue of the thread's bucket: the three queues share the twelve.
    const waiting = await Promise.all(store.doorbell.queues().map((q) => q.getWaitingCount()));
    expect(waiting.reduce((a, b) => a + b)).toBe(12);
    expect(waiting.filter((n) => n > 0).length).toBeGreaterThan(1);

    const thread = threads[0]!;
    const claim = await store.queue.turns.claim(thread, (await store.queue.admin.state(thread)).epoch, 'w1');
    expect(claim.kind).toBe('batch');
    await store.close();
  });

  it('keeps, lists, trims and takes dead letters bucket by bucket across primaries', async () => {
    const store = Store.open({
      url: cluster.url,
      connection: { kind: 'patient' },
      queue: { prefix: uniquePrefix('cl-dead'), buckets: 8, maxFailures: 1, deadMaxPerThread: 2 },
    });
    await store.ready();
    const threads = Array.from({ length: 8 }, (_, i) => `slack:C${i}:t${i}`);
    for (const thread of [...threads, threads[0]!, threads[0]!]) {
      await store.queue.intake.enqueue(thread, { id: `m-${Math.random()}`, body: 'poison' });
      const claim = await store.queue.turns.claim(
        thread,
        (await store.queue.admin.state(thread)).epoch,
        'w1',
      );
      if (claim.kind !== 'batch') throw new Error(`no batch: ${claim.kind}`);
      await store.queue.turns.fail(claim.batch.lease, `agent process ${process.pid} exited`);
    }
    const listed = await store.listing.deadLetters(undefined, 3);
    expect(listed.items).toHaveLength(3);
    expect((await store.listing.deadLetters(undefined, 50)).items).toHaveLength(9);
    expect(await store.listing.summary()).toMatchObject({
      deadLetters: 9,
      deadLetterReasons: [{ reason: 'agent process <n> exited', count: 9 }],
    });
    expect((await store.fleetStats()).dead.letters).toEqual({ held: 9, evicted: { ttl: 0, cap: 1 } });
    const [first] = listed.items;
    expect(await store.admin.discard(first!.thread, first!.batchId)).toBe(1);
    const report = await new DeadRetention(store.queue.config, redisOf(store), silentLogger).runOnce();
    expect(Object.fromEntries(report)).toEqual({ 'letters:cap': 1 });
    await store.close();
  });

  it('reports a single-node address that names a cluster node as a topology problem', async () => {
    const store = Store.open({
      url: cluster.nodes[0]!.url,
      connection: { kind: 'fail-fast', timeoutMs: 1_000 },
    });
    await store.whenReady(2_000);
    const error = await store.ready().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedisTopologyError);
    expect((error as Error).message).toMatch(/names one node of a Redis Cluster.*redis-cluster:\/\//);
    expect(isRedisUnavailable(error)).toBe(true);
    await store.close();
  });

  it('fails readiness while a primary without a replica is down, and recovers when it is back', async () => {
    const store = Store.open({ url: cluster.url, connection: { kind: 'fail-fast', timeoutMs: 1_000 } });
    await store.whenReady(2_000);
    await store.ready();
    const [victim] = await cluster.primaries();
    await victim!.kill();
    const error = await waitFor(
      () =>
        store.ready().then(
          () => undefined,
          (e: unknown) => e as Error,
        ),
      {
        what: 'readiness to fail',
        timeoutMs: 15_000,
        intervalMs: 100,
      },
    );
    expect(isRedisUnavailable(error)).toBe(true);
    await cluster.restart();
    await waitFor(
      () =>
        store.ready().then(
          () => true,
          () => false,
        ),
      { what: 'readiness back', timeoutMs: 20_000 },
    );
    await store.close();
  });
});

describe('the single-node harness', () => {
  it('is not a cluster node, so readiness accepts it', async () => {
    const server = await startRedis({ private: true });
    const store = Store.open({ url: server.url, connection: { kind: 'patient' } });
    await store.ready();
    await store.close();
    await server.stop();
  });
});
