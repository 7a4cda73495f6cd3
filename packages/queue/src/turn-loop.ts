import type { LogSink } from '@tributary/observability';
import type { Batch, Outbound, TurnReport } from './batch.js';
import { LeaseLostError } from './errors.js';
import { heartbeatIntervalMs, heartbeatVerdict, type RenewResult } from './lease-policy.js';
import type { QueueConfig } from './queue-config.js';
import type { NextStep, ThreadTurns } from './threads/thread-turns.js';
import type { OnBusy } from './wake/doorbell-intake.js';

/**
 * Runs one turn for a batch and reports how it ended (recorded with the batch when it is committed).
 * It must stop promptly when `signal` aborts; its result is then ignored.
 */
export type TurnHandler = (batch: Batch, signal: AbortSignal) => Promise<TurnReport>;

/** Why a turn was aborted; carried as `signal.reason`. */
export class TurnAbortedError extends Error {
  constructor(
    readonly why: 'lease-lost' | 'shutdown',
    detail: string,
  ) {
    super(`turn aborted (${why}): ${detail}`);
    this.name = 'TurnAbortedError';
  }
}

/**
 * Thrown by a handler whose turn failed, with what to tell the user if the batch ends dead-lettered
 * (after its last retry, or at once when `final`: retrying cannot help). `splits`: the failure may
 * come from one message's content, so a batch of several is split rather than set aside whole
 * (ThreadTurns.fail).
 */
export class TurnFailedError extends Error {
  override name = 'TurnFailedError';

  constructor(
    message: string,
    readonly outboundIfDead: Outbound[] = [],
    readonly final = false,
    readonly splits = true,
  ) {
    super(message);
  }
}

/** A failure retrying cannot help: the batch is split, or dead-lettered at once. */
export class FinalTurnError extends TurnFailedError {
  override name = 'FinalTurnError';

  constructor(message: string, outboundIfDead: Outbound[] = [], splits = true) {
    super(message, outboundIfDead, true, splits);
  }
}

/**
 * Thrown by a handler whose turn could not start for a reason outside its batch (its agent did not
 * start: the fleet's fault, not the messages'). The batch goes back in line with a growing delay and
 * is never dead-lettered for it (ThreadTurns.defer); the thread is told `notice` once, when the batch
 * has waited `noticeAfterMs`.
 */
export class TurnNotStartedError extends Error {
  override name = 'TurnNotStartedError';

  constructor(
    message: string,
    readonly notice: Outbound[],
    readonly noticeAfterMs: number,
    /** A prompt of this attempt reached an agent before the start that failed. */
    readonly reachedAgent = false,
    /** When the batch began to wait, if before its first put-back (its route's line): counted from then. */
    readonly waitingSince?: number,
  ) {
    super(message);
  }
}

/** What became of a claimed batch in this runner. */
export type BatchOutcome = 'committed' | 'failed' | 'deferred' | 'dead_lettered' | 'abandoned';

/** What the turn loop reports for metrics. */
export interface TurnEvents {
  batchEnded?(outcome: BatchOutcome, thread: string): void;
  /** The heartbeat could not keep the lease: the turn was aborted, nothing committed. */
  leaseLost?(): void;
  /** A commit or fail found another owner's fence: nothing committed. */
  fenced?(): void;
}

type TurnOutcome =
  | { kind: 'done'; report: TurnReport }
  | { kind: 'failed'; reason: string; final: boolean; splits: boolean; outboundIfDead: Outbound[] }
  | { kind: 'deferred'; error: TurnNotStartedError }
  | { kind: 'aborted'; error: TurnAbortedError };

/** Where a thread goes whose turn boundary put replies in its outbox: the runner's reply loop. */
export interface CommittedReplies {
  /** Delivers the thread's outbox. */
  deliver(thread: string): void;
}

export interface TurnLoopOptions {
  turns: ThreadTurns;
  config: Readonly<QueueConfig>;
  handler: TurnHandler;
  replies: CommittedReplies;
  owner: string;
  logger: LogSink;
  events?: TurnEvents;
}

/**
 * The life of a thread while this worker holds its lease: claim, then turn after turn (heartbeat the
 * lease, abort the handler when it is lost, commit-and-drain) until the thread idles, yields, is
 * fenced out or handed back.
 */
export class TurnLoop {
  private readonly active = new Set<AbortController>();
  /** The notices of batches this worker put back, each due when its batch will have waited long enough. */
  private readonly notices = new Set<NodeJS.Timeout>();
  private closing = false;

  constructor(private readonly options: TurnLoopOptions) {}

  /** Turns running now. */
  get running(): number {
    return this.active.size;
  }

  /** From now on a claimed batch is handed back instead of run. */
  stop(): void {
    this.closing = true;
    // The worker that tries a put-back batch next gives its notice when it is due.
    for (const timer of this.notices) clearTimeout(timer);
    this.notices.clear();
  }

  /** Aborts every running turn; each hands its thread back. */
  abortAll(reason = new TurnAbortedError('shutdown', 'worker closing')): void {
    for (const controller of this.active) controller.abort(reason);
  }

  async serve(thread: string, epoch: number, onBusy: OnBusy): Promise<void> {
    const { turns, owner } = this.options;
    const claim = await turns.claim(thread, epoch, owner);
    if (claim.kind === 'busy') return onBusy(claim.retryInMs);
    if (claim.kind !== 'batch') return;

    let batch = claim.batch;
    for (;;) {
      const next = await this.endTurn(batch, await this.runTurn(batch));
      if (next?.kind !== 'batch') return;
      batch = next.batch;
    }
  }

  /** Records how the turn ended; undefined when the thread is no longer ours to continue. */
  private async endTurn(batch: Batch, outcome: TurnOutcome): Promise<NextStep | undefined> {
    const { turns, events } = this.options;
    try {
      if (outcome.kind === 'aborted') {
        if (outcome.error.why === 'shutdown') {
          // Handed back with a fresh epoch, unless another worker took the thread over meanwhile.
          if (!(await turns.abandon(batch.lease))) {
            throw new LeaseLostError(batch.lease.thread, batch.lease.fence);
          }
          events?.batchEnded?.('abandoned', batch.lease.thread);
        } else {
          events?.leaseLost?.();
          this.options.logger.warn(
            {
              thread: batch.lease.thread,
              batchId: batch.id,
              fence: batch.lease.fence,
              why: outcome.error.message,
            },
            'lease lost; turn aborted, nothing committed (another worker has the thread)',
          );
        }
        return undefined;
      }
      const { thread } = batch.lease;
      if (outcome.kind === 'deferred') {
        await this.defer(batch, outcome.error);
        return undefined;
      }
      if (outcome.kind === 'done') {
        const { replies } = this.options;
        const next = await turns.commit(batch.lease, outcome.report);
        if (outcome.report.outbound?.length) replies.deliver(thread);
        events?.batchEnded?.('committed', thread);
        return next;
      }
      const { reason, final, splits, outboundIfDead } = outcome;
      const next = await turns.fail(batch.lease, reason, { final, splits, outboundIfDead });
      // Anything but a retry means the script dead-lettered the batch and moved on.
      const dead = next.kind !== 'retry';
      if (dead && outboundIfDead.length > 0) this.options.replies.deliver(thread);
      events?.batchEnded?.(dead ? 'dead_lettered' : 'failed', thread);
      const context = { thread, batchId: batch.id, reason };
      const { logger } = this.options;
      if (dead) logger.error(context, 'turn failed; batch dead-lettered (see the admin API to re-drive it)');
      else if (next.split)
        logger.warn(
          { ...context, messages: batch.messages.length, retryInMs: next.delayMs },
          'turn kept failing; its messages are retried one at a time, so one cannot set the others aside',
        );
      else logger.warn({ ...context, retryInMs: next.delayMs }, 'turn failed; batch will be retried');
      return next;
    } catch (error) {
      if (!(error instanceof LeaseLostError)) throw error;
      events?.fenced?.();
      this.options.logger.warn(
        { thread: batch.lease.thread, batchId: batch.id, fence: batch.lease.fence },
        'fenced out; nothing committed',
      );
      return undefined;
    }
  }

  /** Puts back a batch whose turn could not start; its notice is sent now or when it is due. */
  private async defer(batch: Batch, error: TurnNotStartedError): Promise<void> {
    const { turns, events, replies, logger } = this.options;
    const { thread } = batch.lease;
    const { notice, noticeAfterMs, reachedAgent, waitingSince } = error;
    const put = await turns.defer(batch.lease, {
      notice,
      noticeAfterMs,
      reachedAgent,
      ...(waitingSince === undefined ? {} : { waitingSince }),
    });
    events?.batchEnded?.('deferred', thread);
    logger.warn(
      { thread, batchId: batch.id, reason: error.message, retryInMs: put.delayMs, waitedMs: put.waitedMs },
      'the turn could not start; its batch is put back, not counted as failed',
    );
    if (put.noticed) replies.deliver(thread);
    else if (put.waitedMs < noticeAfterMs)
      this.noticeLater(thread, batch.id, notice, noticeAfterMs - put.waitedMs);
  }

  /**
   * The notice of a put-back batch that nobody has tried since, when it is due: a worker whose agent
   * cannot start takes no threads, so the batch may wait with no worker to tell its thread.
   */
  private noticeLater(thread: string, batchId: string, notice: Outbound[], inMs: number): void {
    const timer = setTimeout(() => {
      this.notices.delete(timer);
      this.options.turns.noticeDeferred(thread, batchId, notice).then(
        (queued) => {
          if (queued) this.options.replies.deliver(thread);
        },
        (error: unknown) =>
          this.options.logger.warn({ err: error, thread, batchId }, 'notice of a waiting batch not queued'),
      );
    }, inMs);
    timer.unref();
    this.notices.add(timer);
  }

  private async runTurn(batch: Batch): Promise<TurnOutcome> {
    if (this.closing) return { kind: 'aborted', error: new TurnAbortedError('shutdown', 'worker closing') };
    const controller = new AbortController();
    this.active.add(controller);
    const stopHeartbeat = this.heartbeat(batch, controller);
    const aborted = new Promise<never>((_, reject) => {
      controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true });
    });
    aborted.catch(() => {});
    try {
      const turn = this.options.handler(batch, controller.signal);
      turn.catch(() => {});
      const report = await Promise.race([turn, aborted]);
      return controller.signal.aborted
        ? { kind: 'aborted', error: controller.signal.reason }
        : { kind: 'done', report };
    } catch (error) {
      if (controller.signal.aborted) return { kind: 'aborted', error: controller.signal.reason };
      if (error instanceof TurnNotStartedError) return { kind: 'deferred', error };
      const reason = error instanceof Error ? error.message : String(error);
      if (!(error instanceof TurnFailedError))
        return { kind: 'failed', reason, final: false, splits: true, outboundIfDead: [] };
      const { final, splits, outboundIfDead } = error;
      return { kind: 'failed', reason, final, splits, outboundIfDead };
    } finally {
      stopHeartbeat();
      this.active.delete(controller);
    }
  }

  private heartbeat(batch: Batch, controller: AbortController): () => void {
    const { turns, config } = this.options;
    // Monotonic time: a wall-clock jump must neither extend nor cut short the trust window.
    const leaseMs = config.leaseMs;
    let trustedUntil = performance.now() + leaseMs - Math.ceil(leaseMs / 3);
    const beat = async () => {
      const sentAt = performance.now();
      let result: RenewResult;
      try {
        batch.lease.expiresAt = await turns.renew(batch.lease);
        result = { kind: 'renewed' };
      } catch (error) {
        result = error instanceof LeaseLostError ? { kind: 'fenced' } : { kind: 'error' };
      }
      // A renewal counts from when it was sent: Redis started the new lease no later than that.
      const now = result.kind === 'renewed' ? sentAt : performance.now();
      const verdict = heartbeatVerdict(now, trustedUntil, result, leaseMs);
      if (verdict.kind === 'keep') trustedUntil = verdict.trustedUntil;
      else controller.abort(new TurnAbortedError('lease-lost', verdict.why));
    };
    const timer = setInterval(() => void beat(), heartbeatIntervalMs(leaseMs));
    return () => clearInterval(timer);
  }
}
