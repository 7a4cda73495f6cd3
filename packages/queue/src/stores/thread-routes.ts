import type { RedisClient } from '../connections.js';

/**
 * The route each thread started with (docs/adr/0058), as its first accepted message resolved it: kept
 * while the thread lives and renewed with each accepted message, so a change of the route table never
 * moves a conversation mid-way. The record is the route's JSON; config reads it back.
 */
export class ThreadRoutes {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly ttlMs: number,
  ) {}

  /** Records `route` unless the thread has one, and renews the record's life either way. */
  async note(thread: string, route: string): Promise<void> {
    const key = this.key(thread);
    await this.redis.multi().set(key, route, 'PX', this.ttlMs, 'NX').pexpire(key, this.ttlMs).exec();
  }

  /** The thread's recorded route, or undefined for a thread that has none (new, or from before routes). */
  async of(thread: string): Promise<string | undefined> {
    return (await this.redis.get(this.key(thread))) ?? undefined;
  }

  private key(thread: string): string {
    return `${this.prefix}:route:{${thread}}`;
  }
}
