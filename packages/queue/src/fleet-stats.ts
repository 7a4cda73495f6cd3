import type { Redis } from 'ioredis';
import type { BullDoorbell } from './doorbells.js';
import type { QueueConfig } from './queue-config.js';
import { bucketKeys, decodeThread, threadKeys } from './thread-keys.js';

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
}

/**
 * Reads the per-bucket indexes in one pipeline (alongside BullMQ's job counts), then the inbox lengths
 * of the threads they name in a second: two round trips in sequence, bounded by the number of active
 * threads, never a keyspace scan.
 */
export async function readFleetStats(
  redis: Redis,
  { prefix, buckets }: Readonly<QueueConfig>,
  doorbell: BullDoorbell,
): Promise<FleetStats> {
  const indexes = redis.pipeline();
  for (let bucket = 0; bucket < buckets; bucket++) {
    const keys = bucketKeys(prefix, bucket);
    indexes.zrange(keys.sched, 0, -1).zrange(keys.run, 0, -1);
  }
  const [replies, jobs] = await Promise.all([
    indexes.exec().then((r) => r ?? []),
    doorbell.queue.getJobCounts('waiting', 'active', 'delayed', 'completed', 'failed'),
  ]);
  let runnable = 0;
  let running = 0;
  const active = new Set<string>();
  replies.forEach(([error, members], i) => {
    if (error) throw error;
    const list = members as string[];
    if (i % 2 === 0) runnable += list.length;
    else running += list.length;
    for (const member of list) active.add(member);
  });
  const lengths = redis.pipeline();
  for (const member of active) lengths.xlen(threadKeys(prefix, buckets, decodeThread(member)).inbox);
  let backlog = 0;
  for (const [error, length] of (await lengths.exec()) ?? []) {
    if (error) throw error;
    backlog += length as number;
  }
  return { runnable, running, backlog, jobs };
}
