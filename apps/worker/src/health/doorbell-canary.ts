import type { BullDoorbell } from '@tributary/queue';
import type { Logger } from 'pino';

export interface CanaryTiming {
  /** How often this worker adds a canary job to each doorbell queue. */
  periodMs: number;
  /** A worker with a free slot that took no job for this long is not consuming. */
  windowMs: number;
}

export const DEFAULT_CANARY_TIMING: CanaryTiming = { periodMs: 10_000, windowMs: 60_000 };

/**
 * Proves the worker still consumes doorbells: BullMQ workers have been seen to stop taking jobs
 * silently after a Redis reconnect. Every worker adds a canary job to every doorbell queue each period;
 * Redis serves blocked consumers in turn, so a healthy worker with a free slot takes a job (canary or
 * doorbell) from each queue well within the window. One whose consumer of any queue does not is
 * reported not ready, and the orchestrator restarts it.
 */
export class DoorbellCanary {
  /** When each doorbell queue's consumer last took a job. */
  private readonly lastTaken: number[];
  private timer: NodeJS.Timeout | undefined;
  /** Whether a doorbell could start a turn here now; known once the worker takes doorbells. */
  private hasFreeSlot: (() => boolean) | undefined;

  constructor(
    private readonly doorbell: BullDoorbell,
    private readonly owner: string,
    private readonly logger: Logger,
    private readonly timing: CanaryTiming = DEFAULT_CANARY_TIMING,
  ) {
    this.lastTaken = doorbell.queues.map(() => performance.now());
  }

  start(hasFreeSlot: () => boolean): void {
    this.hasFreeSlot = hasFreeSlot;
    this.timer = setInterval(() => {
      this.doorbell.addCanary(this.owner).catch((error: unknown) => {
        this.logger.warn({ err: error }, 'canary not added; readiness relies on the next one');
      });
    }, this.timing.periodMs);
    this.timer.unref();
  }

  /** A job (canary or doorbell) of doorbell queue `queue` reached this worker. */
  taken(queue: number): void {
    this.lastTaken[queue] = performance.now();
  }

  /**
   * A busy worker takes no jobs by design; only an idle one that took none from some queue is stuck.
   * Before it takes doorbells at all, a worker does not consume.
   */
  consuming(): boolean {
    if (!this.hasFreeSlot) return false;
    if (!this.hasFreeSlot()) return true;
    const now = performance.now();
    return this.lastTaken.every((at) => now - at < this.timing.windowMs);
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
