import type { RedisClient } from '../connections.js';
import { DEFAULT_POOL } from '../queue-config.js';
import { DEFAULT_PLACE, type ThreadPlace } from '../wake/route-lines.js';

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

  /** The worker pool the thread's route names (docs/adr/0060); see placeOf. */
  async poolOf(thread: string): Promise<string> {
    return (await this.placeOf(thread)).pool;
  }

  /**
   * The thread's route and the pool it names: the default route and pool for a thread without a record,
   * or whose record is not JSON or names none, so that it is served rather than rung where no worker
   * listens.
   */
  async placeOf(thread: string): Promise<ThreadPlace> {
    const record = await this.of(thread);
    if (record === undefined) return DEFAULT_PLACE;
    try {
      const { route, profile } = JSON.parse(record) as { route?: unknown; profile?: { pool?: unknown } };
      return {
        route: typeof route === 'string' ? route : DEFAULT_PLACE.route,
        pool: typeof profile?.pool === 'string' ? profile.pool : DEFAULT_POOL,
      };
    } catch {
      return DEFAULT_PLACE;
    }
  }

  /**
   * Whether the thread may be told now that its pool has no worker: true once per `ttlMs` (the first
   * ingress to ask in that time tells it; the others stay quiet).
   */
  async claimPoolNotice(thread: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(this.noticeKey(thread), '1', 'PX', ttlMs, 'NX')) === 'OK';
  }

  /** A claimed notice that did not go out: the next message may tell the thread again. */
  async releasePoolNotice(thread: string): Promise<void> {
    await this.redis.del(this.noticeKey(thread));
  }

  /**
   * Keeps the record as long as the thread's work waits or runs: a worker renews it as each turn
   * starts, so a batch held back longer than THREAD_IDLE_TTL_MS (a spent budget, a pool without
   * workers) keeps its route, its pool and its budget.
   */
  async renew(thread: string): Promise<void> {
    await this.redis.pexpire(this.key(thread), this.ttlMs);
  }

  private noticeKey(thread: string): string {
    return `${this.prefix}:pool-notice:{${thread}}`;
  }

  private key(thread: string): string {
    return `${this.prefix}:route:{${thread}}`;
  }
}
