import type { RedisClient } from '../connections.js';
import { Scripts } from '../lua/scripts.js';
import { TURN_LIMIT_SCRIPTS, type TurnSlot, turnSlotFree, turnSlotTake } from '../lua/turn-limit-calls.js';
import { publishRouteSettings, readRouteSettings } from './route-settings.js';

/**
 * Each route's limit on concurrent turns across the fleet (docs/adr/0062): the route table's limits as
 * ingress publishes them, the threads of each limited route running a turn now (with the time each
 * slot lapses, should its worker die), and the line of threads waiting for a slot. All keys share one
 * Cluster slot, so the scripts see a route's table, slots and line together.
 */
export class TurnLimits {
  private readonly scripts: Scripts;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {
    this.scripts = new Scripts(redis, TURN_LIMIT_SCRIPTS);
  }

  /** Replaces the route table's limits (route → turns at once); ingress publishes them. */
  publishTable(limits: ReadonlyMap<string, number>): Promise<void> {
    return publishRouteSettings(this.redis, this.tableKey, limits);
  }

  /** Every limited route's limit, as published. */
  limits(): Promise<Record<string, number>> {
    return readRouteSettings(this.redis, this.tableKey);
  }

  /** A slot of `route` for `thread`'s turn, held for at most `ttlMs`; or its place in the line. */
  take(route: string, thread: string, ttlMs: number): Promise<TurnSlot> {
    return this.scripts.run(
      turnSlotTake,
      { limits: this.tableKey, running: this.runningKey(route), waiting: this.waitingKey(route) },
      { route, thread, ttlMs },
    );
  }

  /**
   * Frees `thread`'s slot of `route` (or its reservation); the thread that waited longest leaves the
   * line, the slot is held for it for `reserveMs`, and it is answered, to be woken.
   */
  free(route: string, thread: string, reserveMs: number): Promise<string | undefined> {
    return this.scripts.run(
      turnSlotFree,
      { running: this.runningKey(route), waiting: this.waitingKey(route) },
      { thread, reserveMs },
    );
  }

  private get tableKey(): string {
    return `${this.prefix}:{turn-limits}:table`;
  }

  private runningKey(route: string): string {
    return `${this.prefix}:{turn-limits}:running:${route}`;
  }

  private waitingKey(route: string): string {
    return `${this.prefix}:{turn-limits}:waiting:${route}`;
  }
}
