import { PlatformApiError } from '@tributary/platforms';
import { isRedisUnavailable, type PendingReply, type ReplyOutbox } from '@tributary/queue';
import type { Logger } from 'pino';
import { outboundFromPayload, type ReplySink } from './outbox.js';
import { type ReplyRetryPolicy, replyStep } from './reply-retry-policy.js';

/** How the deliverer runs; the retry policy is the user-facing part. */
export interface DeliveryOptions {
  retry: ReplyRetryPolicy;
  /** Threads delivered at once by this worker. */
  concurrency: number;
  /** A deliverer that dies holds a thread's outbox this long at most. */
  lockMs: number;
}

export const DEFAULT_DELIVERY: Omit<DeliveryOptions, 'retry'> = {
  concurrency: 4,
  lockMs: 120_000,
};

export type DeliveryOutcome = 'delivered' | 'retried' | 'dead';

/**
 * Delivers what turns committed to the threads' reply outboxes, independently of the agent: per
 * thread in commit order, one deliverer at a time. A failed attempt stays at the head of its thread's
 * outbox and is retried with backoff (or as the platform advised) until the retry horizon, then it
 * becomes a dead reply an operator can re-drive. The worker that committed a reply delivers it at once
 * (`kick`) and retries it when its delay is over; every worker's sweeper `offer`s the threads whose
 * reply is due (a retry of a worker that is gone, a re-driven reply), so none waits on one worker.
 */
export class ReplyDelivery {
  private readonly active = new Set<string>();
  /** Threads kicked while being drained: a reply committed after the drain's last look. */
  private readonly again = new Set<string>();
  private readonly inFlight = new Set<Promise<void>>();
  /** Retries this worker scheduled: thread → timer. */
  private readonly retries = new Map<string, NodeJS.Timeout>();
  private stopped = false;

  constructor(
    private readonly outbox: ReplyOutbox,
    private readonly sinks: readonly ReplySink[],
    private readonly owner: string,
    private readonly options: DeliveryOptions,
    private readonly logger: Logger,
    private readonly onOutcome: (outcome: DeliveryOutcome) => void = () => {},
  ) {}

  /** Stops taking threads and waits for deliveries in flight; what is left waits in Redis for other workers. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.retries.values()) clearTimeout(timer);
    this.retries.clear();
    await Promise.all(this.inFlight);
  }

  /**
   * Threads with a reply due: delivered while this worker has room, the rest left to the next offer.
   * One this worker is delivering already is left alone: a thread stays due for the whole attempt.
   */
  offer(threads: readonly string[]): void {
    for (const thread of threads) {
      if (this.active.size >= this.options.concurrency) return;
      if (!this.active.has(thread)) this.kick(thread);
    }
  }

  /** Delivers the thread's outbox now (its turn just committed a reply). */
  kick(thread: string): void {
    if (this.stopped) return;
    if (this.active.has(thread)) {
      this.again.add(thread);
      return;
    }
    this.active.add(thread);
    const delivery = this.drain(thread)
      .catch((error: unknown) =>
        this.logger.warn({ err: error, thread }, 'reply delivery interrupted; it is retried from the outbox'),
      )
      .finally(() => {
        this.active.delete(thread);
        this.inFlight.delete(delivery);
        // Not while a retry is scheduled: the replies behind a failing one wait for it (backoff).
        if (this.again.delete(thread) && !this.retries.has(thread)) this.kick(thread);
      });
    this.inFlight.add(delivery);
  }

  /** Delivers the thread's replies in order until its outbox is empty, taken elsewhere, or failing. */
  private async drain(thread: string): Promise<void> {
    const { lockMs } = this.options;
    // Stopping ends the loop between replies: what is left waits in Redis for the other workers.
    while (!this.stopped) {
      const take = await this.outbox.take(thread, this.owner, lockMs);
      if (take.kind !== 'reply') return;
      const { reply } = take;
      const message = outboundFromPayload(reply.payload);
      try {
        for (const sink of this.sinks) await sink.send(message, reply.id);
      } catch (error) {
        // Redis, not the platform, failed under the attempt (a part posted and not yet recorded, say):
        // the reply stays locked to this worker, which resumes it when Redis answers (a sweep offers
        // it), editing what it posted; it is no failed delivery.
        if (!(error instanceof PlatformApiError) && isRedisUnavailable(error)) throw error;
        await this.failed(thread, reply, error);
        return;
      }
      const after = await this.outbox.done(thread, this.owner, reply.id);
      if (after === 'lost') return;
      for (const sink of this.sinks) sink.delivered?.(reply.id);
      this.onOutcome('delivered');
      if (reply.attempts > 0) {
        this.logger.info(
          { thread, replyId: reply.id, attempts: reply.attempts + 1 },
          'reply delivered after the platform recovered',
        );
      }
      if (after === 'empty') return;
    }
  }

  private async failed(thread: string, reply: PendingReply, error: unknown): Promise<void> {
    const attempts = reply.attempts + 1;
    const retryAfterMs = (error as { retryAfterMs?: number }).retryAfterMs;
    const step = replyStep(attempts, Date.now() - reply.at, retryAfterMs, this.options.retry, Math.random);
    const reason = error instanceof Error ? error.message : String(error);
    const context = { thread, replyId: reply.id, attempts, err: reason };
    if (step.kind === 'retry') {
      await this.outbox.retry(thread, this.owner, reply.id, step.delayMs, reason);
      this.retryLater(thread, step.delayMs);
      this.onOutcome('retried');
      this.logger.warn(
        { ...context, retryInMs: step.delayMs },
        'reply not delivered; retrying (later replies of the thread wait behind it)',
      );
      return;
    }
    await this.outbox.bury(thread, this.owner, reply.id, reason);
    this.onOutcome('dead');
    this.logger.error(
      context,
      `reply given up after the retry horizon (${step.why}); re-drive it from the admin API once the platform is reachable`,
    );
  }

  /** The thread's outbox is due again in `delayMs`; if this worker is busy or gone then, a sweep offers it. */
  private retryLater(thread: string, delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.retries.get(thread));
    const timer = setTimeout(() => {
      this.retries.delete(thread);
      this.offer([thread]);
    }, delayMs);
    this.retries.set(thread, timer);
  }
}
