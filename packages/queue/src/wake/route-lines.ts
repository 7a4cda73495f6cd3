import type { RedisClient } from '../connections.js';
import { type LetIn, ROUTE_LINE_SCRIPTS, routeLineMove, routeLineRing } from '../lua/route-line-calls.js';
import { Scripts } from '../lua/scripts.js';
import { DEFAULT_POOL } from '../queue-config.js';
import { publishRouteSettings, readRouteSettings } from '../stores/route-settings.js';

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
 * Weighted fair dispatch between routes (docs/adr/0063): each route's line of doorbells in front of its
 * pool's shared queue, and the routes' weights as ingress publishes them from the route table. All keys
 * share one Cluster slot, so a script sees a route's weight, line and let-in doorbells together.
 */
export class RouteLines {
  private readonly scripts: Scripts;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly letInTtlMs = LET_IN_TTL_MS,
  ) {
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
        ttlMs: this.letInTtlMs,
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
      ttlMs: this.letInTtlMs,
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
    return { weights: this.weightsKey, admitted: key('in'), line: key('line'), epochs: key('epochs') };
  }
}
