import { type LogSink, silentLogger } from '@tributary/observability';
import type { RedisClient } from './connections.js';
import type { WorkerKeys } from './thread-keys.js';

/**
 * Announces that a worker is alive: '1' while it has a free turn slot (ringers may hand it doorbells
 * directly, session affinity), '0' while all its slots are busy or it is shutting down. The key expires
 * unless refreshed, so within `ttlMs` of a worker's death (or freeze) ringers stop preferring it and the
 * sweeper hands its threads to others without waiting for their leases. Writes are chained, so the
 * final delete comes last.
 */
export class WorkerPresence {
  private accepting = true;
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

  set(accepting: boolean): void {
    if (this.retired || accepting === this.accepting) return;
    this.accepting = accepting;
    this.write();
  }

  /** Shutting down: still alive (its running turns keep their threads) but taking no doorbells. */
  async retire(): Promise<void> {
    this.set(false);
    this.retired = true;
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
    const value = this.accepting ? '1' : '0';
    this.writes = this.writes
      .then(() => this.redis.set(this.keys.presence, value, 'PX', this.ttlMs))
      .catch((error: unknown) => this.logger.warn({ err: error }, 'presence not refreshed'));
  }
}
