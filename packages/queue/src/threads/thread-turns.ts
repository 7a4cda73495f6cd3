import type { Batch, Lease, Outbound, QueuedMessage, TurnReport } from '../batch.js';
import { LeaseLostError } from '../errors.js';
import * as script from '../lua/queue-calls.js';
import { deadBounds } from '../queue-config.js';
import type { ThreadKeys } from '../thread-keys.js';
import type { ThreadScripts } from './thread-scripts.js';

/** How a failed turn is recorded (ThreadTurns.fail). */
export interface FailureOptions {
  /** Retrying cannot help: no retry after this failure. */
  final?: boolean;
  /** What the thread is told if the batch ends dead-lettered. */
  outboundIfDead?: Outbound[];
  /**
   * The failure may come from one message's content, so a batch of several messages that keeps
   * failing is split rather than dead-lettered whole. Default true; false for a failure of the agent
   * itself (it cannot sign in), which every message would meet.
   */
  splits?: boolean;
}

/** How a batch whose turn could not start goes back in line (ThreadTurns.defer). */
export interface DeferOptions {
  /** A prompt of this delivery reached an agent: it counts as a delivery. */
  reachedAgent: boolean;
  /** What the thread is told, once, when the batch has waited `noticeAfterMs` since it was first put back. */
  notice: Outbound[];
  noticeAfterMs: number;
  /** When its wait began, if before its first put-back (Redis time, ms): it counts from then. */
  waitingSince?: number;
}

/** What ThreadTurns.defer did: the batch is rung again after `delayMs`. */
export interface DeferredBatch {
  delayMs: number;
  /** How long the batch has waited since it was first put back, or its wait began. */
  waitedMs: number;
  /** The notice entered the outbox now. */
  noticed: boolean;
}

/** What the holder of a lease does next after a turn boundary. */
export type NextStep =
  | { kind: 'batch'; batch: Batch }
  | { kind: 'idle' }
  | { kind: 'paused' }
  | { kind: 'yielded' }
  /** `split`: the batch was taken back, its messages are retried one at a time (docs/adr/0033). */
  | { kind: 'retry'; delayMs: number; split?: true };

export type ClaimResult =
  | { kind: 'batch'; batch: Batch }
  | { kind: 'stale' }
  | { kind: 'busy'; retryInMs: number }
  | { kind: 'empty' }
  | { kind: 'paused' };

/**
 * A worker's side of the thread state machine: claim a thread's batch under a lease, keep the lease,
 * and end each turn (commit, fail, defer, hand back), every call but the claim fenced by the lease.
 */
export class ThreadTurns {
  constructor(private readonly threads: ThreadScripts) {}

  async claim(thread: string, epoch: number, owner: string): Promise<ClaimResult> {
    const k = this.threads.keys(thread);
    const reply = await this.threads.scripts.run(script.claim, k, {
      ...(await this.batchArgs(k)),
      owner,
      epoch,
      maxDeliveries: this.threads.config.maxDeliveries,
      ...deadBounds(this.threads.config),
    });
    switch (reply.status) {
      case 'claimed':
        return { kind: 'batch', batch: toBatch(thread, owner, reply.batch) };
      case 'busy':
        return { kind: 'busy', retryInMs: reply.retryInMs };
      case 'stale':
      case 'empty':
      case 'paused':
        return { kind: reply.status };
    }
  }

  /** Extends the lease; throws LeaseLostError when the thread is no longer ours. */
  async renew(lease: Lease): Promise<number> {
    const k = this.threads.keys(lease.thread);
    const reply = await this.threads.scripts.run(script.renew, k, {
      ...holder(k, lease),
      leaseMs: this.threads.config.leaseMs,
    });
    if (reply.status === 'fenced') throw new LeaseLostError(lease.thread, lease.fence);
    return reply.expiresAt;
  }

  /**
   * Commits the in-flight batch with what the turn reported (kept in its history record, its replies
   * put in the thread's outbox) and returns what to do next; throws LeaseLostError when fenced out.
   */
  async commit(lease: Lease, report: TurnReport): Promise<NextStep> {
    const k = this.threads.keys(lease.thread);
    const reply = await this.threads.scripts.run(script.commit, k, {
      ...(await this.continueArgs(k, lease)),
      reply: report.reply,
      stopReason: report.stopReason,
      outbound: JSON.stringify(report.outbound ?? []),
      through: report.deliveredThrough ?? '',
      session: report.session === undefined ? '' : JSON.stringify(report.session),
      usage: report.usage === undefined ? '' : JSON.stringify(report.usage),
    });
    return this.nextStep(k, lease, reply);
  }

  /**
   * Steering (docs/adr/0040): takes the messages waiting right behind `through` (the last message the
   * running turn received) into the running `batch`, up to the batch caps, for its holder to send into
   * the turn; what an earlier steer took past `through` is offered again first. From now on every arrival of the
   * thread while this batch runs is announced on the control channel (`steer`). `full`: messages wait
   * but the batch is at its caps. Throws LeaseLostError when the lease or the batch is no longer ours.
   */
  async steer(
    batch: Batch,
    through: string,
  ): Promise<{ kind: 'taken'; messages: QueuedMessage[] } | { kind: 'full' }> {
    const { lease } = batch;
    const k = this.threads.keys(lease.thread);
    const { maxMessages, maxTokens, lanes } = await this.batchArgs(k);
    const reply = await this.threads.scripts.run(script.steer, k, {
      owner: lease.owner,
      fence: lease.fence,
      batch: batch.id,
      through,
      maxMessages,
      maxTokens,
      lanes,
    });
    if (reply.status === 'fenced') throw new LeaseLostError(lease.thread, lease.fence);
    return reply.status === 'full' ? { kind: 'full' } : { kind: 'taken', messages: reply.messages };
  }

  /**
   * Records a failed turn: the batch is retried later; after `maxFailures` (at once for a `final`
   * failure, which retrying cannot help) a batch of several messages is split when `splits` (the
   * failure may come from one message's content: its messages are retried one at a time), and one of
   * a single message dead-lettered, `outboundIfDead` (the user's notice) entering the reply outbox
   * with it.
   */
  async fail(
    lease: Lease,
    reason: string,
    { final = false, outboundIfDead = [], splits = true }: FailureOptions = {},
  ): Promise<NextStep> {
    const k = this.threads.keys(lease.thread);
    const c = this.threads.config;
    const reply = await this.threads.scripts.run(script.fail, k, {
      ...(await this.continueArgs(k, lease)),
      reason,
      maxFailures: final ? 1 : c.maxFailures,
      retryDelayMs: c.retryDelayMs,
      outboundIfDead: JSON.stringify(outboundIfDead),
      split: splits ? 1 : 0,
      ...deadBounds(c),
    });
    if (reply.status !== 'retry' && reply.status !== 'split') return this.nextStep(k, lease, reply);
    await this.threads.ring(k, reply.epoch, { delayMs: reply.delayMs });
    return { kind: 'retry', delayMs: reply.delayMs, ...(reply.status === 'split' ? { split: true } : {}) };
  }

  /**
   * Puts the in-flight batch back because its turn could not start for a reason outside it (its
   * agent did not start): it is rung again after a delay that doubles with each deferral, counted
   * neither as a failure nor (unless `reachedAgent`) as a delivery. Throws LeaseLostError when the
   * thread is no longer this lease's.
   */
  async defer(lease: Lease, options: DeferOptions): Promise<DeferredBatch> {
    const k = this.threads.keys(lease.thread);
    const c = this.threads.config;
    const reply = await this.threads.scripts.run(script.defer, k, {
      ...holder(k, lease),
      reachedAgent: options.reachedAgent ? 1 : 0,
      baseDelayMs: c.deferDelayMs,
      maxDelayMs: c.deferMaxDelayMs,
      noticeAfterMs: options.noticeAfterMs,
      notice: JSON.stringify(options.notice),
      waitingSince: options.waitingSince ?? 0,
    });
    if (reply.status === 'fenced') throw new LeaseLostError(lease.thread, lease.fence);
    await this.threads.ring(k, reply.epoch, { delayMs: reply.delayMs });
    return { delayMs: reply.delayMs, waitedMs: reply.waitedMs, noticed: reply.noticed };
  }

  /**
   * The notice of a batch that `defer` put back, once it has waited long enough: queued only while
   * the batch is still in flight, not running and not noticed yet. Whether it was queued.
   */
  noticeDeferred(thread: string, batchId: string, notice: Outbound[]): Promise<boolean> {
    const k = this.threads.keys(thread);
    return this.threads.scripts.run(script.noticeDeferred, k, {
      member: k.member,
      batch: batchId,
      notice: JSON.stringify(notice),
    });
  }

  /** Hands the thread back (shutdown): the in-flight batch is re-delivered first, to whoever claims. */
  async abandon(lease: Lease): Promise<boolean> {
    const k = this.threads.keys(lease.thread);
    const reply = await this.threads.scripts.run(script.abandon, k, holder(k, lease));
    if (reply.status !== 'ring') return false;
    await this.threads.ring(k, reply.epoch);
    return true;
  }

  /**
   * Whether the thread has no state: its keys expired `idleTtlMs` after it went idle (or it never
   * ran). A thread with a message waiting, a turn running or a lease held always has one, so what a
   * worker keeps for an expired thread (its room) no turn can be using.
   */
  async expired(thread: string): Promise<boolean> {
    return (await this.threads.redis.exists(this.threads.keys(thread).state)) === 0;
  }

  /** How a batch of the thread is formed and recorded: the arguments claim, commit and fail share. */
  private async batchArgs(k: ThreadKeys) {
    const c = this.threads.config;
    const { mode, maxMessages, maxTokens } = await c.batching(k.thread);
    return {
      member: k.member,
      thread: k.thread,
      leaseMs: c.leaseMs,
      maxMessages: mode === 'per-message' ? 1 : (maxMessages ?? c.maxBatchMessages),
      maxTokens: maxTokens ?? c.maxBatchTokens,
      lanes: mode === 'per-lane' ? 1 : 0,
      bucket: k.bucket,
      historyMax: c.historyLimit,
      historyMaxAgeMs: c.historyMaxAgeMs,
      idleTtlMs: c.idleTtlMs,
    };
  }

  private async continueArgs(k: ThreadKeys, lease: Lease) {
    return {
      ...(await this.batchArgs(k)),
      ...holder(k, lease),
      yieldAfterTurns: this.threads.config.yieldAfterTurns,
    };
  }

  private async nextStep(k: ThreadKeys, lease: Lease, reply: script.AfterTurn): Promise<NextStep> {
    switch (reply.status) {
      case 'next':
        return { kind: 'batch', batch: toBatch(lease.thread, lease.owner, reply.batch) };
      case 'idle':
      case 'paused':
        return { kind: reply.status };
      case 'yield':
        // The back of this worker's own line, where its session is: another worker takes the thread
        // only if this one cannot serve it within the affinity wait (docs/adr/0007).
        await this.threads.ring(
          k,
          reply.epoch,
          this.threads.config.affinity ? { prefer: { owner: lease.owner } } : {},
        );
        return { kind: 'yielded' };
      case 'fenced':
        throw new LeaseLostError(lease.thread, lease.fence);
    }
  }
}

/** Who holds the thread's lease: what every script of a lease holder checks first. */
function holder(k: ThreadKeys, lease: Lease) {
  return { member: k.member, owner: lease.owner, fence: lease.fence };
}

function toBatch(thread: string, owner: string, reply: script.BatchReply): Batch {
  const { fence, expiresAt, ...rest } = reply;
  return { ...rest, lease: { thread, owner, fence, expiresAt } };
}
