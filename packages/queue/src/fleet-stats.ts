import type { RedisClient } from './connections.js';
import { DEFAULT_POOL, type QueueConfig } from './queue-config.js';
import type { ThreadRoutes } from './stores/thread-routes.js';
import { takingWorkersByPool, type WorkerRegistry } from './stores/worker-registry.js';
import { type BucketKeys, bucketKeys, type DeadKind, decodeThread, threadKeys } from './thread-keys.js';
import type { BullDoorbell } from './wake/doorbell.js';

/** Fleet-wide queue figures, the same from every process (they come from Redis). */
export interface FleetStats {
  /** Threads waiting for a worker: the autoscaling signal. */
  runnable: number;
  /** Threads with a turn in progress. */
  running: number;
  /** Messages in the inboxes of runnable and running threads (an idle thread's inbox is empty). */
  backlog: number;
  /** Doorbell jobs by BullMQ state. */
  jobs: Record<string, number>;
  /** Doorbells in their routes' lines, in front of the queues (docs/adr/0063). */
  lined: number;
  /** Dead letters and dead replies kept, and the running totals of those the TTL and the caps dropped. */
  dead: Record<DeadKind, DeadStats>;
  /**
   * Each worker pool's threads and workers (docs/adr/0060): every pool a worker reports or an active
   * thread's route names, and the default pool always.
   */
  pools: Record<string, PoolStats>;
}

export interface PoolStats {
  /** Threads of the pool waiting for one of its workers. */
  runnable: number;
  running: number;
  /** Workers of the pool that take doorbells now. */
  workers: number;
}

/** What the pool figures are read from: each thread's route, each worker's report. */
export interface PoolSources {
  routes: Pick<ThreadRoutes, 'poolOf'>;
  workers: Pick<WorkerRegistry, 'list'>;
}

export interface DeadStats {
  held: number;
  evicted: { ttl: number; cap: number };
}

/**
 * Reads the per-bucket indexes (alongside BullMQ's job counts), then the inbox lengths of the threads
 * they name: two rounds in sequence, bounded by the number of active threads, never a keyspace scan.
 * Each round is sent as one batch of independent commands, not a pipeline, because in a Cluster the
 * buckets live on different primaries.
 */
export async function readFleetStats(
  redis: RedisClient,
  { prefix, buckets }: Readonly<QueueConfig>,
  doorbell: BullDoorbell,
  sources: PoolSources,
): Promise<FleetStats> {
  const indexes = Array.from({ length: buckets }, (_, bucket) => bucketKeys(prefix, bucket));
  const now = Date.now();
  const [sched, run, dead, workers] = await Promise.all([
    Promise.all(indexes.map((keys) => redis.zrange(keys.sched, 0, -1, 'WITHSCORES'))),
    Promise.all(indexes.map((keys) => redis.zrange(keys.run, 0, -1))),
    readDeadStats(redis, indexes),
    sources.workers.list(),
  ]);
  // A thread scheduled for later (a deferred batch: its agent would not start, its room or its route's
  // budget is spent) waits for time, not for a worker: it is no demand for workers.
  const scheduled = sched.flatMap((pairs) => pairs.filter((_, i) => i % 2 === 0));
  const runnable = sched.flatMap((pairs) =>
    pairs.filter((_, i) => i % 2 === 0 && Number(pairs[i + 1]) <= now),
  );
  const active = new Set([...scheduled, ...run.flat()]);
  const [lengths, runnablePools, runningPools] = await Promise.all([
    Promise.all(
      [...active].map((member) => redis.xlen(threadKeys(prefix, buckets, decodeThread(member)).inbox)),
    ),
    Promise.all(runnable.map((member) => sources.routes.poolOf(decodeThread(member)))),
    Promise.all(run.flat().map((member) => sources.routes.poolOf(decodeThread(member)))),
  ]);
  const pools: Record<string, PoolStats> = { [DEFAULT_POOL]: { runnable: 0, running: 0, workers: 0 } };
  const poolOf = (name: string) => (pools[name] ??= { runnable: 0, running: 0, workers: 0 });
  for (const pool of runnablePools) poolOf(pool).runnable++;
  for (const pool of runningPools) poolOf(pool).running++;
  for (const [pool, taking] of takingWorkersByPool(workers)) poolOf(pool).workers = taking;
  for (const pool of workers.map((worker) => worker.pool ?? DEFAULT_POOL)) poolOf(pool);
  // Doorbell jobs of every pool known here, summed.
  const jobs: Record<string, number> = {};
  const names = Object.keys(pools);
  const [counts, lined] = await Promise.all([
    Promise.all(names.map((pool) => doorbell.jobCounts(pool))),
    Promise.all(names.map((pool) => doorbell.lined(pool))),
  ]);
  for (const count of counts) {
    for (const [state, n] of Object.entries(count)) jobs[state] = (jobs[state] ?? 0) + n;
  }
  return {
    runnable: runnable.length,
    running: run.flat().length,
    backlog: lengths.reduce((sum, length) => sum + length, 0),
    jobs,
    lined: lined.reduce((sum, n) => sum + n, 0),
    dead,
    pools,
  };
}

/** Three reads per bucket: the two dead sets' sizes and its eviction totals (lib/dead.lua's dead_evict). */
async function readDeadStats(
  redis: RedisClient,
  indexes: readonly BucketKeys[],
): Promise<Record<DeadKind, DeadStats>> {
  const stats = (): DeadStats => ({ held: 0, evicted: { ttl: 0, cap: 0 } });
  const dead = { letters: stats(), replies: stats() };
  await Promise.all(
    indexes.map(async (keys) => {
      const [letters, replies, evicted] = await Promise.all([
        redis.zcard(keys.deadindex),
        redis.zcard(keys.deadreplyindex),
        redis.hgetall(keys.deadevicted),
      ]);
      dead.letters.held += letters;
      dead.replies.held += replies;
      for (const kind of ['letters', 'replies'] as const) {
        dead[kind].evicted.ttl += Number(evicted[`${kind}:ttl`] ?? 0);
        dead[kind].evicted.cap += Number(evicted[`${kind}:cap`] ?? 0);
      }
    }),
  );
  return dead;
}
