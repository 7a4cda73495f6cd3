import type { BullDoorbell } from '@tributary/queue';
import type { Logger } from 'pino';

export interface CanaryTiming {
  /** How often this worker adds a canary job to the shared doorbell queue. */
  periodMs: number;
  /** A worker with a free slot that took no job for this long is not consuming. */
  windowMs: number;
}

export const DEFAULT_CANARY_TIMING: CanaryTiming = { periodMs: 10_000, windowMs: 60_000 };

/**
 * Proves the worker still consumes doorbells: BullMQ workers have been seen to stop taking jobs
 * silently after a Redis reconnect. Every worker adds a canary job each period; Redis serves blocked
 * consumers in turn, so a healthy worker with a free slot takes a job (canary or doorbell) well within
 * the window. One that does not is reported not ready, and the orchestrator restarts it.
 */
export class DoorbellCanary {
  private lastTaken = performance.now();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly doorbell: BullDoorbell,
    private readonly owner: string,
    private readonly hasFreeSlot: () => boolean,
    private readonly logger: Logger,
    private readonly timing: CanaryTiming = DEFAULT_CANARY_TIMING,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      this.doorbell.addCanary(this.owner).catch((error: unknown) => {
        this.logger.warn({ err: error }, 'canary not added; readiness relies on the next one');
      });
    }, this.timing.periodMs);
    this.timer.unref();
  }

  /** A job (canary or doorbell) reached this worker. */
  taken(): void {
    this.lastTaken = performance.now();
  }

  /** A busy worker takes no jobs by design; only an idle one that took none is stuck. */
  consuming(): boolean {
    return !this.hasFreeSlot() || performance.now() - this.lastTaken < this.timing.windowMs;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
