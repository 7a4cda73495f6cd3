import type { RedisClient } from '../connections.js';
import { Scripts } from '../lua/scripts.js';
import { TURN_LIMIT_SCRIPTS, type TurnSlot, turnSlotFree, turnSlotTake } from '../lua/turn-limit-calls.js';
import { decodeThread, encodeThread } from '../thread-keys.js';
import { publishRouteSettings, readRouteSettings } from './route-settings.js';

/**
 * The limits' keys. They share the Cluster slot of the routes' lines, whose scripts let a limited
 * route's doorbell in only with one of its slots (docs/adr/0064). Threads are held by their members.
 */
export function turnLimitKeys(prefix: string) {
  return {
    limits: `${prefix}:{route-lines}:limits`,
    running: (route: string) => `${prefix}:{route-lines}:running:${route}`,
    waiting: (route: string) => `${prefix}:{route-lines}:waiting:${route}`,
  };
}

/**
 * Each route's limit on concurrent turns across the fleet (docs/adr/0062): the route table's limits as
 * ingress publishes them, the threads of each limited route running a turn now (with the time each
 * slot lapses, should its worker die), and the line of threads put back for want of a slot. All keys
 * share one Cluster slot, so the scripts see a route's table, slots and line together.
 */
export class TurnLimits {
  private readonly scripts: Scripts;
  private readonly keys: ReturnType<typeof turnLimitKeys>;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
  ) {
    this.scripts = new Scripts(redis, TURN_LIMIT_SCRIPTS);
    this.keys = turnLimitKeys(prefix);
  }

  /** Replaces the route table's limits (route → turns at once); ingress publishes them. */
  publishTable(limits: ReadonlyMap<string, number>): Promise<void> {
    return publishRouteSettings(this.redis, this.keys.limits, limits);
  }

  /** Every limited route's limit, as published. */
  limits(): Promise<Record<string, number>> {
    return readRouteSettings(this.redis, this.keys.limits);
  }

  /** A slot of `route` for `thread`'s turn, held for at most `ttlMs`; or its place in the line. */
  take(route: string, thread: string, ttlMs: number): Promise<TurnSlot> {
    return this.scripts.run(
      turnSlotTake,
      { limits: this.keys.limits, running: this.keys.running(route), waiting: this.keys.waiting(route) },
      { route, thread: encodeThread(thread), ttlMs },
    );
  }

  /**
   * Frees `thread`'s slot of `route` (or its reservation); the thread that waited longest leaves the
   * line, the slot is held for it for `reserveMs`, and it is answered, to be woken.
   */
  async free(route: string, thread: string, reserveMs: number): Promise<string | undefined> {
    const next = await this.scripts.run(
      turnSlotFree,
      { running: this.keys.running(route), waiting: this.keys.waiting(route) },
      { thread: encodeThread(thread), reserveMs },
    );
    return next === undefined ? undefined : decodeThread(next);
  }
}
