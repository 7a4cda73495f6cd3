/**
 * The queue's key layout, for tests and benchmarks that look at Redis directly. No app needs it: every
 * read and write of these keys goes through the queue's stores and scripts (docs/adr/0011).
 */
import type { QueueConfig } from './queue-config.js';
import { type ThreadKeys, threadKeys } from './thread-keys.js';

export { bucketKeys, deadSetKeys, dedupMember, threadKeys, workerKeys } from './thread-keys.js';

/** A thread's keys under a queue's prefix and bucket count (the queue's own `keys`, for a test's reads). */
export function keysOf(
  queue: { config: Pick<QueueConfig, 'prefix' | 'buckets'> },
  thread: string,
): ThreadKeys {
  return threadKeys(queue.config.prefix, queue.config.buckets, thread);
}
