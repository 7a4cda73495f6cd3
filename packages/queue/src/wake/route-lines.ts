import type { RedisClient } from '../connections.js';
import { type LetIn, ROUTE_LINE_SCRIPTS, routeLineMove, routeLineRing } from '../lua/route-line-calls.js';
import { Scripts } from '../lua/scripts.js';
import { DEFAULT_POOL } from '../queue-config.js';
import { publishRouteSettings, readRouteSettings } from '../stores/route-settings.js';
import { turnLimitKeys } from '../stores/turn-limits.js';

/** Where a thread's doorbells ring: its route's worker pool, and its route's line there. */
export interface ThreadPlace {
  pool: string;
  route: string;
}

/** The place of a thread without a route record: the route of threads no route matches. */
export const DEFAULT_PLACE: ThreadPlace = Object.freeze({ pool: DEFAULT_POOL, route: 'default' });

/** Doorbells a route may have in its pool's shared queue at once, per unit of its weight. */
export const LINE_QUANTUM = 2;

/**
 * A doorbell let in is taken off the queue within this time unless the pool is saturated. Past it, it no
 * longer counts against its route: a backstop for one lost on its way that the sweeper did not find.
 */
export const LET_IN_TTL_MS = 60_000;

/**
 * A route's messages that have waited this long for a turn slot are told so. A doorbell that has waited
 * this long in a line held back by its route's turn limit goes in anyway, to be put back with the notice.
 */
export const ROUTE_WAIT_NOTICE_MS = 60_000;

/** How long a line's doorbells count and wait; tests shorten them. */
export interface LineTiming {
  /** A doorbell let in counts against its route this long at most (LET_IN_TTL_MS). */
  letInTtlMs: number;
  /**
   * A limited route's doorbell let in holds a turn slot for its thread (docs/adr/0064) until taken, and
   * this long after: the turn takes the slot at once, unless the doorbell found nothing to serve.
   */
  graceMs: number;
  /** A doorbell held back by its route's turn limit this long goes in anyway (ROUTE_WAIT_NOTICE_MS). */
  toldMs: number;
}

const LINE_TIMING: LineTiming = {
  letInTtlMs: LET_IN_TTL_MS,
  graceMs: 5_000,
  toldMs: ROUTE_WAIT_NOTICE_MS,
};

/**
 * Weighted fair dispatch between routes (docs/adr/0063): each route's line of doorbells in front of its
 * pool's shared queue, and the routes' weights as ingress publishes them from the route table. A route
 * with a turn limit lets a doorbell in only with a slot (0064). All keys share one Cluster slot, with
 * the turn limits' keys, so a script sees a route's weight, limit, slots, line and let-in doorbells
 * together.
 */
export class RouteLines {
  private readonly scripts: Scripts;

  private readonly timing: LineTiming;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    timing: Partial<LineTiming> = {},
  ) {
    this.timing = { ...LINE_TIMING, ...timing };
    this.scripts = new Scripts(redis, ROUTE_LINE_SCRIPTS);
  }

  /** Replaces the route table's dispatch weights (route → weight; unlisted routes weigh 1). */
  publishWeights(weights: ReadonlyMap<string, number>): Promise<void> {
    return publishRouteSettings(this.redis, this.weightsKey, weights);
  }

  /** Every weighted route's weight, as published. */
  weights(): Promise<Record<string, number>> {
    return readRouteSettings(this.redis, this.weightsKey);
  }

  /** Puts the thread's doorbell on its route's line; answers the doorbells to add to the queue now. */
  ring(place: ThreadPlace, member: string, epoch: number): Promise<LetIn[]> {
    return this.scripts.run(
      routeLineRing,
      { ...this.keys(place), routes: this.routesKey(place.pool) },
      {
        route: place.route,
        member,
        epoch,
        base: LINE_QUANTUM,
        ttlMs: this.timing.letInTtlMs,
        toldMs: this.timing.toldMs,
      },
    );
  }

  /**
   * The doorbells `left` left the queue, taken to be served or found gone: answers the doorbells of
   * the line to add to it now. With none, it only lets in what a stalled line has room for.
   */
  move(place: ThreadPlace, left: readonly LetIn[]): Promise<LetIn[]> {
    return this.scripts.run(routeLineMove, this.keys(place), {
      route: place.route,
      left: left.map(({ member, epoch }) => `${member}:${epoch}`).join(','),
      base: LINE_QUANTUM,
      ttlMs: this.timing.letInTtlMs,
      toldMs: this.timing.toldMs,
      graceMs: this.timing.graceMs,
    });
  }

  /** Whether the line holds the thread's doorbell for `epoch`. */
  async holds(place: ThreadPlace, member: string, epoch: number): Promise<boolean> {
    const keys = this.keys(place);
    const [since, rung] = await Promise.all([
      this.redis.zscore(keys.line, member),
      this.redis.hget(keys.epochs, member),
    ]);
    return since !== null && rung === String(epoch);
  }

  /** The route's doorbells let in to the queue and not yet taken, with the epoch each was rung with. */
  async letIn(place: ThreadPlace): Promise<LetIn[]> {
    const keys = this.keys(place);
    const members = await this.redis.zrange(keys.admitted, 0, -1);
    if (members.length === 0) return [];
    const epochs = await this.redis.hmget(keys.epochs, ...members);
    return members.map((member, i) => ({ member, epoch: Number(epochs[i]) }));
  }

  /** How many doorbells wait in the route's line. */
  length(place: ThreadPlace): Promise<number> {
    return this.redis.zcard(this.keys(place).line);
  }

  /** How many doorbells wait in the lines of `pool`'s routes, all together. */
  async lined(pool: string): Promise<number> {
    const routes = await this.redis.smembers(this.routesKey(pool));
    const lengths = await Promise.all(routes.map((route) => this.length({ pool, route })));
    return lengths.reduce((sum, length) => sum + length, 0);
  }

  private routesKey(pool: string): string {
    return `${this.prefix}:{route-lines}:routes:${pool}`;
  }

  private get weightsKey(): string {
    return `${this.prefix}:{route-lines}:weights`;
  }

  private keys({ pool, route }: ThreadPlace) {
    const key = (what: string) => `${this.prefix}:{route-lines}:${what}:${pool}:${route}`;
    const limits = turnLimitKeys(this.prefix);
    return {
      weights: this.weightsKey,
      admitted: key('in'),
      line: key('line'),
      epochs: key('epochs'),
      limits: limits.limits,
      running: limits.running(route),
    };
  }
}
