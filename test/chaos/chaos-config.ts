import { type QueueConfig, queueConfig } from '@tributary/queue';

/**
 * Short leases and a fast sweeper so that kills and freezes turn into takeovers within the run. On a
 * Cluster, one doorbell queue per primary.
 */
export function chaosQueueConfig(
  prefix: string,
  doorbellQueues = 1,
  overrides: Partial<QueueConfig> = {},
): Readonly<QueueConfig> {
  return queueConfig({
    prefix,
    buckets: 16,
    doorbellQueues,
    leaseMs: 1_500,
    sweepIntervalMs: 250,
    lostDoorbellAfterMs: 1_000,
    maxBatchMessages: 10,
    yieldAfterTurns: 5,
    maxBacklog: 1_000_000,
    historyLimit: 1_000_000,
    maxDeliveries: 1_000,
    maxFailures: 1_000,
    retryDelayMs: 100,
    ...overrides,
  });
}
