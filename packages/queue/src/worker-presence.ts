import { type LogSink, silentLogger } from '@tributary/observability';
import type { RedisClient } from './connections.js';
import type { WorkerKeys } from './thread-keys.js';

/** What a worker's presence key holds; anything else (or no key) means gone. */
export const PRESENCE = {
  /** A turn slot is free: a direct doorbell runs at once. */
  free: '1',
  /** Every slot is busy: a direct doorbell waits in its list for the next free slot. */
  busy: 'busy',
  /** Shutting down: alive (its running turns keep their threads), but taking no doorbells. */
  retiring: '0',
} as const;

/**
 * Announces that a worker is alive and whether it takes direct doorbells (session affinity; see
 * PRESENCE for the values). The key expires unless refreshed, so within `ttlMs` of a worker's death
 * (or freeze) ringers stop preferring it and the sweeper hands its threads to others without waiting
 * for their leases. Writes are chained, so the final delete comes last.
 */
export class WorkerPresence {
  private free = true;
  private retired = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private writes: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: WorkerKeys,
    private readonly ttlMs: number,
    private readonly logger: LogSink = silentLogger,
  ) {}

  start(): void {
    this.write();
    this.timer = setInterval(() => this.write(), Math.max(10, Math.floor(this.ttlMs / 3)));
  }

  /** Whether a turn slot is free. */
  set(free: boolean): void {
    if (this.retired || free === this.free) return;
    this.free = free;
    this.write();
  }

  /** Shutting down: still alive (its running turns keep their threads) but taking no doorbells. */
  async retire(): Promise<void> {
    this.retired = true;
    this.write();
    await this.writes;
  }

  /** Withdraws the announcement once the worker holds no thread any more. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.writes = this.writes.then(() => this.redis.del(this.keys.presence));
    await this.writes.catch((error: unknown) =>
      this.logger.warn({ err: error }, 'presence not withdrawn; it expires on its own'),
    );
  }

  private write(): void {
    if (this.stopped) return;
    const value = this.retired ? PRESENCE.retiring : this.free ? PRESENCE.free : PRESENCE.busy;
    this.writes = this.writes
      .then(() => this.redis.set(this.keys.presence, value, 'PX', this.ttlMs))
      .catch((error: unknown) => this.logger.warn({ err: error }, 'presence not refreshed'));
  }
}
