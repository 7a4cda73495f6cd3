import { type LogSink, silentLogger } from '@tributary/observability';
import type { Redis } from 'ioredis';
import type { WorkerKeys } from './thread-keys.js';

/**
 * Announces a worker to ringers for session affinity: '1' while it is alive with a free turn slot, '0'
 * while all its slots are busy. The key expires unless refreshed, so a dead or frozen worker stops
 * receiving direct doorbells within `ttlMs`. Writes are chained, so the final delete comes last.
 */
export class WorkerPresence {
  private accepting = true;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private writes: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly redis: Redis,
    private readonly keys: WorkerKeys,
    private readonly ttlMs: number,
    private readonly logger: LogSink = silentLogger,
  ) {}

  start(): void {
    this.write();
    this.timer = setInterval(() => this.write(), Math.max(10, Math.floor(this.ttlMs / 3)));
  }

  set(accepting: boolean): void {
    if (accepting === this.accepting) return;
    this.accepting = accepting;
    this.write();
  }

  /** Withdraws the announcement; ringers use the shared queue from now on. */
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
