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
 * How long a slot outlives a worker that died holding it; a running turn renews it every
 * `TURN_SLOT_RENEW_MS`, so only a dead worker's slots lapse.
 */
export const TURN_SLOT_TTL_MS = 10 * 60 * 1000;
const TURN_SLOT_RENEW_MS = 3 * 60 * 1000;
/**
 * How long a freed slot is held for the thread woken to take it: longer than the longest put-back
 * delay, so that one woken while its put-back was still under way takes it when its doorbell rings.
 */
const RESERVE_MS = 60_000;
/** How soon a thread woken during its own put-back is asked again. */
const WAKE_AGAIN_MS = 500;

/** What becomes of a thread of the line rung as a slot is freed (Store.wake). */
export type Wake = 'woken' | 'not-yet' | 'gone';

/** The store's side of a freed slot (Store.wake, Store.moveLine). */
export interface SlotWaker {
  /** Rings a thread put back for want of a slot at once. */
  wake(thread: string): Promise<Wake>;
  /** Lets the next doorbell of the thread's route's line in: no put-back thread waits. */
  moveLine(thread: string): Promise<void>;
}

type SlotMetrics = Pick<Metrics, 'routeTurnWaitsTotal' | 'routeTurnLimitFailuresTotal'>;

/**
 * Each route's limit on concurrent turns across the fleet (docs/adr/0062): a turn takes one of its
 * route's slots before it starts, or its batch waits in the route's line; as a turn ends its slot is
 * held for the thread that waited longest, which is rung at once, its put-back delay being only the
 * backstop.
 */
export class RouteTurnSlots {
  /** The renewal of each slot held by a turn of this worker, by thread. */
  private readonly held = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly limits: Pick<TurnLimits, 'take' | 'free'>,
    private readonly waker: SlotWaker,
    private readonly metrics: SlotMetrics,
    /** How often a held slot is renewed while its turn runs. */
    private readonly renewMs = TURN_SLOT_RENEW_MS,
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
    if (!slot.taken) {
      this.metrics.routeTurnWaitsTotal.inc({ route });
      throw new RouteAtLimit(route, slot.limit, slot.waiting);
    }
    if (slot.limit === 0) return false;
    this.keep(route, thread, log);
    return true;
  }

  /**
   * After a turn that held a slot: frees it for the thread put back that has waited longest, and rings
   * that one; with none, the route's line lets its next doorbell in (docs/adr/0064). A thread put back
   * with nothing waiting any more (its messages were cancelled) is passed over.
   */
  async free(route: string, thread: string, log: Logger): Promise<void> {
    this.leave(thread);
    try {
      // Each thread passed over has left the line, so this ends however many there are; stopping
      // early would leave the slot held for the last one passed over, and the line still.
      let freed = thread;
      for (;;) {
        const next = await this.limits.free(route, freed, RESERVE_MS);
        if (next === undefined) return await this.waker.moveLine(thread);
        const wake = await this.waker.wake(next);
        if (wake === 'woken') return;
        if (wake === 'not-yet') return this.wakeAgain(route, next, log);
        log.debug({ route, passedOver: next }, 'a thread of the route line had nothing waiting any more');
        freed = next;
      }
    } catch (error) {
      this.metrics.routeTurnLimitFailuresTotal.inc({ what: 'free' });
      log.warn(
        { err: error, route },
        "the turn's route slot was not freed, or its line not moved; the slot lapses on its own, and the line's next thread starts at its put-back delay or the next sweep",
      );
    }
  }

  /**
   * A turn whose lease went to another worker: its slot is left to the next owner, which re-takes it
   * and frees it; this worker stops renewing it, or it would hold the slot past that free.
   */
  leave(thread: string): void {
    clearInterval(this.held.get(thread));
    this.held.delete(thread);
  }

  /** Renews the slot while the turn runs: only a worker that died lets one lapse. */
  private keep(route: string, thread: string, log: Logger): void {
    clearInterval(this.held.get(thread));
    const timer = setInterval(() => {
      this.limits.take(route, thread, TURN_SLOT_TTL_MS).catch((error: unknown) => {
        this.metrics.routeTurnLimitFailuresTotal.inc({ what: 'renew' });
        log.warn({ err: error, route }, "the turn's route slot was not renewed; it lapses if this goes on");
      });
    }, this.renewMs);
    timer.unref();
    this.held.set(thread, timer);
  }

  /**
   * A thread woken while its own put-back was under way: asked once more shortly; its slot is held
   * for it meanwhile, and its doorbell rings at its put-back delay anyway.
   */
  private wakeAgain(route: string, thread: string, log: Logger): void {
    const timer = setTimeout(() => {
      this.waker
        .wake(thread)
        .catch((error: unknown) =>
          log.debug(
            { err: error, route, thread },
            'a waiting thread was not rung again; its put-back rings it',
          ),
        );
    }, WAKE_AGAIN_MS);
    timer.unref();
  }
}
