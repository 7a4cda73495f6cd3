import type { Metrics } from '@tributary/observability';
import type { TurnLimits } from '@tributary/queue';
import type { Logger } from 'pino';

/** Raised before a turn of a route whose turns across the fleet are all taken: the batch waits in line. */
export class RouteAtLimit extends Error {
  override name = 'RouteAtLimit';

  constructor(
    readonly route: string,
    readonly limit: number,
    readonly waiting: number,
  ) {
    super(`route ${route} runs at most ${limit} turns at once across the fleet, and all are taken`);
  }

  /** What the thread is told when its messages have waited a while. */
  get notice(): string {
    return `⏳ These messages are waiting their turn: this channel's agent answers at most ${this.limit} conversations at once, and all are busy. They are kept and will be answered as one ends.`;
  }
}

/**
 * How long a slot outlives a worker that died holding it. A turn that runs longer than this lets one
 * more of its route's turns start (the limit is exceeded by one, never a thread lost).
 */
export const TURN_SLOT_TTL_MS = 30 * 60 * 1000;

type SlotMetrics = Pick<Metrics, 'routeTurnWaitsTotal' | 'routeTurnLimitFailuresTotal'>;

/** Threads of the line tried per freed slot; any left wait out their put-back delay, the backstop. */
const WAKE_TRIES = 5;

/**
 * Each route's limit on concurrent turns across the fleet (docs/adr/0062): a turn takes one of its
 * route's slots before it starts, or its batch waits in the route's line; as a turn ends its slot is
 * freed and the thread that waited longest is rung at once, its put-back delay being only the backstop.
 */
export class RouteTurnSlots {
  constructor(
    private readonly limits: Pick<TurnLimits, 'take' | 'free'>,
    /** Rings a waiting thread at once (Store.wake). */
    private readonly wake: (thread: string) => Promise<boolean>,
    private readonly metrics: SlotMetrics,
  ) {}

  /**
   * Before a turn: whether a slot is now held for it (false: its route has no limit, or the limit
   * could not be read and it runs unchecked, at warn). Throws RouteAtLimit when every slot is taken.
   */
  async take(route: string, thread: string, log: Logger): Promise<boolean> {
    let slot: Awaited<ReturnType<TurnLimits['take']>>;
    try {
      slot = await this.limits.take(route, thread, TURN_SLOT_TTL_MS);
    } catch (error) {
      this.metrics.routeTurnLimitFailuresTotal.inc({ what: 'take' });
      log.warn({ err: error, route }, "the route's turn limit was not checked; this turn runs unchecked");
      return false;
    }
    if (slot.taken) return slot.limit > 0;
    this.metrics.routeTurnWaitsTotal.inc({ route });
    throw new RouteAtLimit(route, slot.limit, slot.waiting);
  }

  /**
   * After a turn that held a slot: frees it and rings the thread that has waited longest for one. A
   * thread of the line that waits no more (its messages were cancelled, or it was rung meanwhile) is
   * passed over for the next.
   */
  async free(route: string, thread: string, log: Logger): Promise<void> {
    try {
      for (let tries = 0; tries < WAKE_TRIES; tries++) {
        const next = await this.limits.free(route, thread);
        if (next === undefined || (await this.wake(next))) return;
        log.debug({ route, passedOver: next }, 'a thread of the route line was not waiting any more');
      }
    } catch (error) {
      this.metrics.routeTurnLimitFailuresTotal.inc({ what: 'free' });
      log.warn(
        { err: error, route },
        "the turn's route slot was not freed; it lapses on its own, and the next thread starts at its put-back delay",
      );
    }
  }
}
