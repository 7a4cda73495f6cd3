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
