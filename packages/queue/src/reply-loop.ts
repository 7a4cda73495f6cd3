import type { LogSink } from '@tributary/observability';
import type { PostedParts } from './posted-parts.js';
import { isRedisUnavailable } from './redis-unavailable.js';
import { DEFAULT_REPLY_RETRY, type ReplyRetryPolicy, replyStep } from './reply-retry-policy.js';
import type { ReplySink } from './reply-sink.js';
import type { PendingReply, PostedPart, ReplyOutbox, TakenReply } from './stores/reply-outbox.js';

/** How replies are delivered; the retry policy is the user-facing part. */
export interface DeliveryOptions {
  retry: ReplyRetryPolicy;
  /** Threads delivered at once by this worker. */
  concurrency: number;
  /** A deliverer that dies holds a thread's outbox this long at most. */
  lockMs: number;
}

export const DEFAULT_DELIVERY: DeliveryOptions = {
  retry: DEFAULT_REPLY_RETRY,
  concurrency: 4,
  lockMs: 120_000,
};

export type DeliveryOutcome = 'delivered' | 'retried' | 'dead';

export interface ReplyLoopOptions {
  outbox: Pick<ReplyOutbox, 'take' | 'done' | 'retry' | 'bury' | 'postedParts'>;
  parts: PostedParts;
  sink: ReplySink;
  owner: string;
  delivery: DeliveryOptions;
  logger: LogSink;
  /** For metrics only. */
  onOutcome?(outcome: DeliveryOutcome): void;
}

/**
 * Delivers what turns committed to the threads' reply outboxes, independently of the agent: per
 * thread in commit order, one deliverer at a time. A failed attempt stays at the head of its thread's
 * outbox and is retried with backoff (or as the platform advised) until the retry horizon, then it
 * becomes a dead reply an operator can re-drive. The turn loop hands over a thread whose turn committed
 * a reply, this loop retries its own failed
 * attempts when their delay is over, and the sweeper offers the threads whose reply is due (a retry of
 * a worker that is gone, a re-driven reply), so none waits on one worker.
 */
export class ReplyLoop {
  private readonly active = new Set<string>();
  /** Threads handed over while being delivered (a reply committed after the delivery's last look). */
  private readonly again = new Set<string>();
  private readonly inFlight = new Set<Promise<void>>();
  /** Retries this worker scheduled: thread → timer. */
  private readonly retries = new Map<string, NodeJS.Timeout>();
  private stopped = false;

  constructor(private readonly options: ReplyLoopOptions) {}

  /** How long a reply taken here stays locked to this worker. */
  get lockMs(): number {
    return this.options.delivery.lockMs;
  }

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
      if (this.active.size >= this.options.delivery.concurrency) return;
      if (!this.active.has(thread)) this.deliver(thread);
    }
  }

  /** Delivers the thread's outbox now; once more after the delivery in flight, if one is. */
  deliver(thread: string): void {
    if (this.stopped) return;
    if (this.active.has(thread)) {
      this.again.add(thread);
      return;
    }
    this.active.add(thread);
    const delivery = this.drain(thread)
      .catch((error: unknown) =>
        this.options.logger.warn(
          { err: error, thread },
          'reply delivery interrupted; it is retried from the outbox',
        ),
      )
      .finally(() => {
        this.active.delete(thread);
        this.inFlight.delete(delivery);
        // Not while a retry is scheduled: the replies behind a failing one wait for it (backoff).
        if (this.again.delete(thread) && !this.retries.has(thread)) this.deliver(thread);
      });
    this.inFlight.add(delivery);
  }

  /** Delivers the thread's replies in order until its outbox is empty, taken elsewhere, or failing. */
  private async drain(thread: string): Promise<void> {
    let next = await this.take(thread);
    while (next) next = await this.attempt(thread, next);
  }

  private async take(thread: string): Promise<TakenReply | undefined> {
    const { outbox, owner } = this.options;
    const take = await outbox.take(thread, owner, this.lockMs);
    return take.kind === 'reply' ? take : undefined;
  }

  /** One attempt at the head of the thread's outbox; the reply after it when that is this worker's next. */
  private async attempt(thread: string, { reply, posted }: TakenReply): Promise<TakenReply | undefined> {
    const { outbox, parts, sink, owner, logger } = this.options;
    const { id } = reply;
    let unrecorded: unknown;
    let last: PostedPart | undefined;
    try {
      last = await sink.deliver({
        thread,
        id,
        payload: reply.payload,
        attempts: reply.attempts,
        posted: await parts.known(thread, id, posted),
        record: (part, messageId) =>
          parts.posted(thread, id, part, messageId).catch((error: unknown) => {
            unrecorded = error;
            throw error;
          }),
      });
    } catch (error) {
      // Redis, not the platform, failed under the attempt (a part posted and not yet recorded): the
      // reply stays locked to this worker, which resumes it when Redis answers (a sweep offers it),
      // editing what it posted; it is no failed delivery.
      if (unrecorded !== undefined && isRedisUnavailable(unrecorded)) throw error;
      await this.failed(thread, reply, error);
      return undefined;
    }
    if (last) parts.hold(id, last);
    // Stopping ends the loop between replies: what is left waits in Redis for the other workers.
    const lockMs = this.stopped ? 0 : this.lockMs;
    const done = await outbox.done(thread, owner, id, last ? { last, lockMs } : { lockMs });
    parts.forget(id);
    if (done.kind === 'lost') return undefined;
    this.options.onOutcome?.('delivered');
    if (reply.attempts > 0) {
      logger.info(
        { thread, replyId: id, attempts: reply.attempts + 1 },
        'reply delivered after the platform recovered',
      );
    }
    if (done.kind !== 'more' || !done.next) return undefined;
    return { reply: done.next, posted: await outbox.postedParts(thread, done.next.id) };
  }

  private async failed(thread: string, reply: PendingReply, error: unknown): Promise<void> {
    const { outbox, owner, logger, delivery } = this.options;
    const attempts = reply.attempts + 1;
    const retryAfterMs = (error as { retryAfterMs?: number }).retryAfterMs;
    const step = replyStep(attempts, Date.now() - reply.at, retryAfterMs, delivery.retry, Math.random);
    const reason = error instanceof Error ? error.message : String(error);
    const context = { thread, replyId: reply.id, attempts, err: reason };
    if (step.kind === 'retry') {
      await outbox.retry(thread, owner, reply.id, step.delayMs, reason);
      this.retryLater(thread, step.delayMs);
      this.options.onOutcome?.('retried');
      logger.warn(
        { ...context, retryInMs: step.delayMs },
        'reply not delivered; retrying (later replies of the thread wait behind it)',
      );
      return;
    }
    await outbox.bury(thread, owner, reply.id, reason);
    this.options.onOutcome?.('dead');
    logger.error(
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
