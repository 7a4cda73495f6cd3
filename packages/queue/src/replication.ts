import type { RedisClient } from './connections.js';
import { QueueError } from './errors.js';

/** Fewer replicas than asked confirmed a write in time: it is on the primary, not yet acknowledged. */
export class ReplicationLagError extends QueueError {
  constructor(confirmed: number, asked: number, timeoutMs: number) {
    super(
      'REPLICATION_LAG',
      `Redis replicated the write to ${confirmed} of ${asked} replicas within ${timeoutMs} ms; ` +
        'not acknowledged, retry',
    );
  }
}

/**
 * Waits until `replicas` replicas of the primary holding `key` have every write this connection sent
 * there (WAIT), so a failover right after cannot lose it. WAIT names no key; sent in a pipeline behind
 * a read of `key`, it reaches that key's primary in a Cluster too.
 */
export async function awaitReplicas(
  redis: RedisClient,
  key: string,
  replicas: number,
  timeoutMs: number,
): Promise<void> {
  const replies = (await redis.pipeline().exists(key).wait(replicas, timeoutMs).exec()) ?? [];
  const [error, confirmed] = replies[1] ?? [new Error('WAIT got no reply'), 0];
  if (error) throw error;
  if ((confirmed as number) < replicas)
    throw new ReplicationLagError(confirmed as number, replicas, timeoutMs);
}
