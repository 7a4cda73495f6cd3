/** Base class: every error the queue raises on purpose carries a stable code. */
export class QueueError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** The thread already holds as many messages as allowed; nothing was written (ingress answers 429). */
export class BacklogFullError extends QueueError {
  constructor(
    readonly thread: string,
    readonly backlog: number,
  ) {
    super(
      'BACKLOG_FULL',
      `thread ${JSON.stringify(thread)} already has ${backlog} messages waiting; retry later`,
    );
  }
}

/** Owner or fence no longer match: another worker owns the thread now; the caller must commit nothing. */
export class LeaseLostError extends QueueError {
  constructor(
    readonly thread: string,
    readonly fence: number,
  ) {
    super('LEASE_LOST', `lease on thread ${JSON.stringify(thread)} at fence ${fence} is no longer held`);
  }
}

/** Redis is configured so that it may evict queue keys, which would lose acknowledged messages. */
export class UnsafeRedisError extends QueueError {
  constructor(message: string) {
    super('UNSAFE_REDIS', message);
  }
}

/**
 * Redis answers but cannot serve every key: a Cluster with slots that have no reachable primary, or a
 * single-node address pointing at one node of a Cluster. Callers treat it as Redis being unavailable
 * (readiness fails, ingress answers 503); the message says which it is.
 */
export class RedisTopologyError extends QueueError {
  constructor(message: string) {
    super('REDIS_TOPOLOGY', message);
  }
}

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
