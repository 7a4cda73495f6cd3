import { type LogSink, silentLogger } from '@tributary/observability';
import type { RedisClient } from './connections.js';
import type { WorkerKeys } from './thread-keys.js';

/** What a worker's presence key holds; anything else (or no key) means gone. */
export const PRESENCE = {
  /**
   * Alive and taking doorbells: a direct doorbell runs in its next free slot, at once when one is
   * free. Whether one is free is not announced: a handed-over doorbell waits either way, and a value
   * that changed with every turn's start and end cost two writes a turn under load.
   */
  taking: '1',
  /**
   * Alive (its running turns keep their threads) but taking no direct doorbells: shutting down, or
   * running with session affinity off (it reads no list of its own, so ringers must not push to it).
   */
  retiring: '0',
} as const;

/**
 * How a worker tells the fleet it is alive and whether it takes direct doorbells: the sweeper's
 * liveness signal and the ringers' affinity. `WorkerPresence` writes it from the worker's own event
 * loop; a worker app may hand the runner another (one kept by a process beside it).
 */
export interface Presence {
  start(): void;
  /** Shutting down: still alive (its running turns keep their threads) but taking no doorbells. */
  retire(): Promise<void>;
  /** Withdraws the announcement once the worker holds no thread any more. */
  stop(): Promise<void>;
}

/**
 * Announces that a worker is alive and whether it takes direct doorbells (session affinity; see
 * PRESENCE for the values). The key expires unless refreshed, so within `ttlMs` of a worker's death
 * (or freeze) ringers stop preferring it and the sweeper hands its threads to others without waiting
 * for their leases. Writes are chained, so the final delete comes last.
 */
export class WorkerPresence implements Presence {
  private retired = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private writes: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: WorkerKeys,
    private readonly ttlMs: number,
    /** Whether this worker reads a list of direct doorbells at all (session affinity on). */
    private readonly takesDirect: boolean,
    private readonly logger: LogSink = silentLogger,
  ) {}

  start(): void {
    this.write();
    this.timer = setInterval(() => this.write(), Math.max(10, Math.floor(this.ttlMs / 3)));
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
    const value = this.retired || !this.takesDirect ? PRESENCE.retiring : PRESENCE.taking;
    this.writes = this.writes
      .then(() => this.redis.set(this.keys.presence, value, 'PX', this.ttlMs))
      .catch((error: unknown) => this.logger.warn({ err: error }, 'presence not refreshed'));
  }
}
