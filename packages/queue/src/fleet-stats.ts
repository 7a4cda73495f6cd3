import type { RedisClient } from './connections.js';
import type { QueueConfig } from './queue-config.js';
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
  /** Dead letters and dead replies kept, and the running totals of those the TTL and the caps dropped. */
  dead: Record<DeadKind, DeadStats>;
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
): Promise<FleetStats> {
  const indexes = Array.from({ length: buckets }, (_, bucket) => bucketKeys(prefix, bucket));
  const [sched, run, jobs, dead] = await Promise.all([
    Promise.all(indexes.map((keys) => redis.zrange(keys.sched, 0, -1))),
    Promise.all(indexes.map((keys) => redis.zrange(keys.run, 0, -1))),
    doorbell.jobCounts(),
    readDeadStats(redis, indexes),
  ]);
  const active = new Set([...sched.flat(), ...run.flat()]);
  const lengths = await Promise.all(
    [...active].map((member) => redis.xlen(threadKeys(prefix, buckets, decodeThread(member)).inbox)),
  );
  return {
    runnable: sched.flat().length,
    running: run.flat().length,
    backlog: lengths.reduce((sum, length) => sum + length, 0),
    jobs,
    dead,
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
