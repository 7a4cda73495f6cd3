import type { LogSink } from '@tributary/observability';
import type { Queue } from 'bullmq';
import { CANARY_JOB, type DoorbellData } from './doorbell.js';

export interface ConsumerTiming {
  /** How often this worker adds a canary job to each doorbell queue. */
  periodMs: number;
  /** A consumer that took nothing for this long while jobs wait and a slot is free is replaced. */
  stalledAfterMs: number;
  /** A worker with a free slot whose consumer of some queue took no job for this long is not consuming. */
  windowMs: number;
}

export const DEFAULT_CONSUMER_TIMING: ConsumerTiming = {
  periodMs: 10_000,
  stalledAfterMs: 10_000,
  windowMs: 60_000,
};

/**
 * Keeps a worker's BullMQ consumers of the doorbell queues honest: they have been seen to stop taking
 * jobs silently after the primary holding their queue restarted. Every period each worker adds a
 * canary job to every queue (Redis serves blocked consumers in turn, so every healthy consumer gets
 * something to take even when no thread rings); a consumer that leaves jobs waiting while the worker
 * has a free slot is replaced (`replace`), and one that still takes nothing within the window makes
 * the worker not ready (`consuming`, whatever was replaced meanwhile), so the orchestrator restarts it.
 */
export class ConsumerWatch {
  /** When each queue's consumer last took a job (a canary or a doorbell). */
  private readonly lastTaken: number[];
  /** When each queue's consumer was last replaced: a new one gets a whole stall period to connect. */
  private readonly lastReplaced: number[];
  private readonly timers: NodeJS.Timeout[] = [];
  private hasFree: (() => boolean) | undefined;

  constructor(
    private readonly queues: readonly Queue<DoorbellData>[],
    private readonly owner: string,
    private readonly replace: (queue: number) => void,
    private readonly logger: LogSink,
    private readonly timing: ConsumerTiming = DEFAULT_CONSUMER_TIMING,
  ) {
    this.lastTaken = queues.map(() => performance.now());
    this.lastReplaced = queues.map(() => Number.NEGATIVE_INFINITY);
  }

  start(hasFree: () => boolean): void {
    this.hasFree = hasFree;
    this.timers.push(
      setInterval(() => void this.addCanaries(), this.timing.periodMs),
      setInterval(() => void this.replaceStalled(), this.timing.stalledAfterMs / 2),
    );
    for (const timer of this.timers) timer.unref();
  }

  stop(): void {
    for (const timer of this.timers) clearInterval(timer);
    this.timers.length = 0;
  }

  /** Queue `queue`'s consumer took a job; whether it was a canary (which rings no thread). */
  taken(queue: number, name: string): boolean {
    this.lastTaken[queue] = performance.now();
    return name === CANARY_JOB;
  }

  /**
   * A busy worker takes no jobs by design; only an idle one whose consumer of some queue took none is
   * stuck. Before it takes doorbells at all, a worker does not consume.
   */
  consuming(): boolean {
    if (!this.hasFree) return false;
    if (!this.hasFree()) return true;
    const now = performance.now();
    return this.lastTaken.every((at) => now - at < this.timing.windowMs);
  }

  private async addCanaries(): Promise<void> {
    const jobId = `canary-${this.owner}-${Date.now()}`;
    const options = { removeOnComplete: true, removeOnFail: true, jobId };
    try {
      await Promise.all(this.queues.map((queue) => queue.add(CANARY_JOB, { thread: '', epoch: 0 }, options)));
    } catch (error) {
      this.logger.warn({ err: error }, 'canary not added; readiness relies on the next one');
    }
  }

  private async replaceStalled(): Promise<void> {
    if (!this.hasFree?.()) return;
    const now = performance.now();
    for (const [queue, counter] of this.queues.entries()) {
      const quiet = now - Math.max(this.lastTaken[queue]!, this.lastReplaced[queue]!);
      if (quiet < this.timing.stalledAfterMs) continue;
      const waiting = await counter.getWaitingCount().catch((error: unknown) => {
        this.logger.warn({ err: error, queue }, 'doorbell queue not counted; checked again next time');
        return 0;
      });
      if (waiting === 0 || !this.hasFree?.()) continue;
      this.logger.warn({ queue, waiting }, 'doorbell queue consumer stalled; replacing it');
      this.lastReplaced[queue] = performance.now();
      this.replace(queue);
    }
  }
}
