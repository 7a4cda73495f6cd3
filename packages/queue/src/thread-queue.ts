import type {
  Batch,
  BatchRecord,
  DeadLetter,
  Lease,
  Origin,
  Outbound,
  QueuedMessage,
  TurnReport,
} from './batch.js';
import { popsAcrossSlots, type RedisClient } from './connections.js';
import { DIRECT_LIST_TTL_MS, type Doorbell, type RingOptions } from './doorbells.js';
import { BacklogFullError, LeaseLostError } from './errors.js';
import * as script from './lua/queue-calls.js';
import { Scripts } from './lua/scripts.js';
import { deadBounds, type QueueConfig } from './queue-config.js';
import { ReplicaAcknowledgement } from './replication.js';
import { controlChannelName } from './stores/control-channel.js';
import { DeadSets } from './stores/dead-sets.js';
import {
  bucketKeys,
  decodeThread,
  dedupMember,
  type ThreadKeys,
  threadKeys,
  type WorkerKeys,
  workerKeys,
} from './thread-keys.js';

export interface NewMessage {
  /** The caller's id for the message (kept in batch records). */
  id: string;
  /** Retries with the same key within `dedupTtlMs` are absorbed. Defaults to `id`. */
  idempotencyKey?: string;
  body: string;
  origin?: Origin;
  /** Token cost for `maxBatchTokens`, when the caller already knows it; else `config.countTokens(body)`. */
  tokens?: number;
  /** The sender, for `per-lane` processing: a batch ends where the lane changes. */
  lane?: string;
  /** An edit of message `id` that came after it was dispatched: its receipt points here too. */
  edit?: boolean;
  /** Conditions on the thread's gate state, checked atomically with the acceptance. */
  gate?: GateConditions;
}

/** The part of an ingress gate's verdict that depends on the thread's gate state. */
export interface GateConditions {
  /** Refuse unless a message of the thread was accepted before. */
  requireInvolved: boolean;
  /** Refuse once this many agent messages were accepted in a row. */
  maxBotTurns?: number;
}

/** An edit or delete of an accepted message, by the platform message id it was enqueued with. */
export type Revision =
  | { action: 'edit'; messageId: string; idempotencyKey: string; body: string; tokens?: number }
  | { action: 'delete'; messageId: string; idempotencyKey: string };

/**
 * `applied`: the buffered entry was replaced or removed in place; `dispatched`: a worker has it, or an
 * edit has too much waiting behind it to be rewritten in place (`editRewriteMax`): the edit must then
 * travel as an event of its own, and a delete is recorded; `notFound`: no accepted message by that id
 * is known (or it was dropped); `duplicate`: this edit or delete was seen before.
 */
export type RevisionResult = 'applied' | 'dispatched' | 'notFound' | 'duplicate';

export type EnqueueResult =
  | { outcome: 'accepted'; streamId: string; seq: number; rang: boolean }
  | { outcome: 'duplicate'; streamId: string }
  | { outcome: 'gated'; refusal: script.GateCondition };

/** How a failed turn is recorded (ThreadQueue.fail). */
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

/** How a batch whose turn could not start goes back in line (ThreadQueue.defer). */
export interface DeferOptions {
  /** A prompt of this delivery reached an agent: it counts as a delivery. */
  reachedAgent: boolean;
  /** What the thread is told, once, when the batch has waited `noticeAfterMs` since it was first put back. */
  notice: Outbound[];
  noticeAfterMs: number;
}

/** What ThreadQueue.defer did: the batch is rung again after `delayMs`. */
export interface DeferredBatch {
  delayMs: number;
  /** How long the batch has waited since it was first put back. */
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

export interface ThreadState {
  status: 'idle' | 'scheduled' | 'running';
  /** The batch in flight, while running. */
  batchId: string | null;
  /** When the latest batch was handed to a worker (Redis clock, ms). */
  claimedAt: number | null;
  epoch: number;
  fence: number;
  owner: string | null;
  leaseExpiresAt: number | null;
  paused: boolean;
  generation: number;
  /** Messages in the inbox: in flight plus waiting. */
  backlog: number;
}

/** Threads whose key sets are remembered before the map starts over (a bound on memory). */
const RECENT_KEYS = 10_000;

/** The enqueue script's keys: the thread's, and the presence and list of the worker it may hand the ring to. */
type EnqueueKeys = ThreadKeys & Pick<WorkerKeys, 'presence' | 'doorbells'>;

/**
 * The per-thread turn queue. Every state transition is one Lua script (see lua/queue-calls.ts); this class
 * names each script's keys and arguments, turns its decoded reply into the caller's result and rings
 * doorbells when a script says so.
 */
export class ThreadQueue {
  private readonly scripts: Scripts;
  /** Key sets of recently seen threads: building one (encoding, hashing) cost a message more than its script. */
  private readonly recentKeys = new Map<string, ThreadKeys>();
  /** Whether enqueue rings through lists itself (workers pop them across slots only on a single Redis). */
  private readonly readyLists: boolean;
  /**
   * The enqueue script's keys of recent threads, with the guess they name: merging the worker's keys
   * into the thread's made a new object of some twenty keys for every message.
   */
  private readonly recentEnqueueKeys = new Map<string, { guess: string | undefined; keys: EnqueueKeys }>();
  /** The last owner each recent thread's latest ring named. */
  private readonly lastOwners = new Map<string, string>();
  private readonly replicas: ReplicaAcknowledgement;
  private readonly dead: DeadSets;

  constructor(
    private readonly redis: RedisClient,
    readonly config: Readonly<QueueConfig>,
    private readonly doorbell: Doorbell,
  ) {
    this.scripts = new Scripts(redis, script.QUEUE_SCRIPTS);
    this.readyLists = popsAcrossSlots(redis);
    this.replicas = new ReplicaAcknowledgement(redis, config.ackReplicas, config.ackReplicasTimeoutMs);
    this.dead = new DeadSets(redis, (thread) => this.keys(thread));
  }

  keys(thread: string): ThreadKeys {
    let keys = this.recentKeys.get(thread);
    if (!keys) {
      keys = threadKeys(this.config.prefix, this.config.buckets, thread);
      if (this.recentKeys.size >= RECENT_KEYS) this.recentKeys.clear();
      this.recentKeys.set(thread, keys);
    }
    return keys;
  }

  /**
   * The enqueue script's keys: the thread's, and those of the worker guessed to be its last owner
   * (the one its latest ring named), so the script can hand the ring to it. With no guess, or in a
   * Cluster, the thread's ready list stands in: a key in the thread's slot the script then leaves alone.
   */
  private withWorkerKeys(thread: string, k: ThreadKeys, guess: string | undefined): EnqueueKeys {
    const known = this.recentEnqueueKeys.get(thread);
    if (known !== undefined && known.guess === guess) return known.keys;
    const worker =
      guess === undefined ? { presence: k.ready, doorbells: k.ready } : workerKeys(this.config.prefix, guess);
    const keys = { ...k, ...worker };
    if (this.recentEnqueueKeys.size >= RECENT_KEYS) this.recentEnqueueKeys.clear();
    this.recentEnqueueKeys.set(thread, { guess, keys });
    return keys;
  }

  private rememberOwner(thread: string, owner: string): void {
    if (this.lastOwners.size >= RECENT_KEYS) this.lastOwners.clear();
    this.lastOwners.set(thread, owner);
  }

  /**
   * How the caller rings what the enqueue script did not push: with a last owner it is handed over
   * from here (ADR 0007); otherwise it goes to the shared queue.
   */
  private ringAfterEnqueue(lastOwner: string): RingOptions {
    return this.config.affinity && lastOwner !== '' ? { prefer: { owner: lastOwner } } : {};
  }

  /** Readiness: every script is in Redis's cache (reloaded after a Redis restart). */
  async ensureScripts(): Promise<number> {
    return this.scripts.ensureLoaded();
  }

  async enqueue(thread: string, message: NewMessage): Promise<EnqueueResult> {
    const k = this.keys(thread);
    const c = this.config;
    const guessing = this.readyLists && c.affinity;
    const guess = guessing ? this.lastOwners.get(thread) : undefined;
    const reply = await this.scripts.run(script.enqueue, this.withWorkerKeys(thread, k, guess), {
      member: k.member,
      dedupMember: dedupMember(thread, message.idempotencyKey ?? message.id),
      messageId: message.id,
      tokens: message.tokens ?? c.countTokens(message.body),
      origin: message.origin ?? 'user',
      body: message.body,
      lane: message.lane ?? '',
      maxBacklog: c.maxBacklog,
      dedupTtlMs: this.dedupWindowMs(),
      requireInvolved: message.gate?.requireInvolved ? 1 : 0,
      maxBotTurns: message.gate?.maxBotTurns ?? '',
      edit: message.edit ? 1 : 0,
      ...this.receiptBounds(),
      listTtlMs: this.readyLists ? DIRECT_LIST_TTL_MS : '',
      affinity: c.affinity ? 1 : 0,
      guess: guess ?? '',
      thread,
      idleTtlMs: c.idleTtlMs,
      controlChannel: controlChannelName(c.prefix),
    });
    switch (reply.status) {
      case 'duplicate':
        // Confirmed too: its first delivery may have been refused for want of this confirmation.
        await this.replicated(k);
        return { outcome: 'duplicate', streamId: reply.streamId };
      case 'gated':
        return { outcome: 'gated', refusal: reply.refusal };
      case 'backlogFull':
        throw new BacklogFullError(thread, reply.backlog);
      case 'queued':
        await this.replicated(k);
        return { outcome: 'accepted', streamId: reply.streamId, seq: reply.seq, rang: false };
    }
    if (guessing && reply.lastOwner !== '') this.rememberOwner(thread, reply.lastOwner);
    // The message is durable already; a doorbell lost here (or popped from a list by a worker that
    // died before its claim) is re-rung by the sweeper.
    const rang =
      reply.pushed !== undefined ||
      (await this.ring(k, reply.epoch, this.ringAfterEnqueue(reply.lastOwner)).then(
        () => true,
        () => false,
      ));
    // Rung first: a refused acknowledgement (the platform retries) must not leave the thread waiting.
    await this.replicated(k);
    return { outcome: 'accepted', streamId: reply.streamId, seq: reply.seq, rang };
  }

  /** Applies an edit or delete to the message while it is buffered (see RevisionResult). */
  async revise(thread: string, revision: Revision): Promise<RevisionResult> {
    const k = this.keys(thread);
    const body = revision.action === 'edit' ? revision.body : '';
    const reply = await this.scripts.run(script.revise, k, {
      member: k.member,
      dedupMember: dedupMember(thread, revision.idempotencyKey),
      messageId: revision.messageId,
      action: revision.action,
      body,
      tokens: revision.action === 'edit' ? (revision.tokens ?? this.config.countTokens(body)) : 0,
      dedupTtlMs: this.dedupWindowMs(),
      rewriteMax: this.config.editRewriteMax,
      rewriteMaxBytes: this.config.editRewriteMaxBytes,
      ...this.receiptBounds(),
    });
    // An edit or delete that changed (or recorded) something is acknowledged as a message is: once
    // replicated, so a failover cannot bring the old text back to the agent.
    if (reply.status !== 'notFound') await this.replicated(k);
    return reply.status;
  }

  /** Records that ingress refused a message addressed to us, for its receipt. */
  async noteRefusal(thread: string, messageId: string, reason: string): Promise<void> {
    const k = this.keys(thread);
    await this.scripts.run(script.noteRefusal, k, {
      member: k.member,
      messageId,
      reason,
      ...this.receiptBounds(),
    });
  }

  /** Waits until the replicas `ackReplicas` asks for hold the thread's writes (or throws). */
  private replicated(k: ThreadKeys): Promise<void> {
    return this.replicas.confirm(k.state);
  }

  async claim(thread: string, epoch: number, owner: string): Promise<ClaimResult> {
    const k = this.keys(thread);
    const reply = await this.scripts.run(script.claim, k, {
      ...this.batchArgs(k),
      owner,
      epoch,
      maxDeliveries: this.config.maxDeliveries,
      ...deadBounds(this.config),
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
    const k = this.keys(lease.thread);
    const reply = await this.scripts.run(script.renew, k, {
      ...holder(k, lease),
      leaseMs: this.config.leaseMs,
    });
    if (reply.status === 'fenced') throw new LeaseLostError(lease.thread, lease.fence);
    return reply.expiresAt;
  }

  /**
   * Commits the in-flight batch with what the turn reported (kept in its history record, its replies
   * put in the thread's outbox) and returns what to do next; throws LeaseLostError when fenced out.
   */
  async commit(lease: Lease, report: TurnReport): Promise<NextStep> {
    const k = this.keys(lease.thread);
    const reply = await this.scripts.run(script.commit, k, {
      ...this.continueArgs(k, lease),
      reply: report.reply,
      stopReason: report.stopReason,
      outbound: JSON.stringify(report.outbound ?? []),
      through: report.deliveredThrough ?? '',
      session: report.session === undefined ? '' : JSON.stringify(report.session),
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
    const k = this.keys(lease.thread);
    const { maxMessages, maxTokens, lanes } = this.batchArgs(k);
    const reply = await this.scripts.run(script.steer, k, {
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
    const k = this.keys(lease.thread);
    const c = this.config;
    const reply = await this.scripts.run(script.fail, k, {
      ...this.continueArgs(k, lease),
      reason,
      maxFailures: final ? 1 : c.maxFailures,
      retryDelayMs: c.retryDelayMs,
      outboundIfDead: JSON.stringify(outboundIfDead),
      split: splits ? 1 : 0,
      ...deadBounds(c),
    });
    if (reply.status !== 'retry' && reply.status !== 'split') return this.nextStep(k, lease, reply);
    await this.ring(k, reply.epoch, { delayMs: reply.delayMs });
    return { kind: 'retry', delayMs: reply.delayMs, ...(reply.status === 'split' ? { split: true } : {}) };
  }

  /**
   * Puts the in-flight batch back because its turn could not start for a reason outside it (its
   * agent did not start): it is rung again after a delay that doubles with each deferral, counted
   * neither as a failure nor (unless `reachedAgent`) as a delivery. Throws LeaseLostError when the
   * thread is no longer this lease's.
   */
  async defer(lease: Lease, options: DeferOptions): Promise<DeferredBatch> {
    const k = this.keys(lease.thread);
    const c = this.config;
    const reply = await this.scripts.run(script.defer, k, {
      ...holder(k, lease),
      reachedAgent: options.reachedAgent ? 1 : 0,
      baseDelayMs: c.deferDelayMs,
      maxDelayMs: c.deferMaxDelayMs,
      noticeAfterMs: options.noticeAfterMs,
      notice: JSON.stringify(options.notice),
    });
    if (reply.status === 'fenced') throw new LeaseLostError(lease.thread, lease.fence);
    await this.ring(k, reply.epoch, { delayMs: reply.delayMs });
    return { delayMs: reply.delayMs, waitedMs: reply.waitedMs, noticed: reply.noticed };
  }

  /**
   * The notice of a batch that `defer` put back, once it has waited long enough: queued only while
   * the batch is still in flight, not running and not noticed yet. Whether it was queued.
   */
  noticeDeferred(thread: string, batchId: string, notice: Outbound[]): Promise<boolean> {
    const k = this.keys(thread);
    return this.scripts.run(script.noticeDeferred, k, {
      member: k.member,
      batch: batchId,
      notice: JSON.stringify(notice),
    });
  }

  /** Hands the thread back (shutdown): the in-flight batch is re-delivered first, to whoever claims. */
  async abandon(lease: Lease): Promise<boolean> {
    const k = this.keys(lease.thread);
    const reply = await this.scripts.run(script.abandon, k, holder(k, lease));
    if (reply.status !== 'ring') return false;
    await this.ring(k, reply.epoch);
    return true;
  }

  /**
   * A sweeper's pass over `bucket` for `owner`: the threads with a reply due and, when `owner` took the
   * bucket's lock for this interval, the sweep's candidates. Undefined when there is nothing at all.
   */
  scanBucket(
    bucket: number,
    owner: string,
    limits: { sweepBatch: number; dueBatch: number },
  ): Promise<script.BucketScan | undefined> {
    const c = this.config;
    return this.scripts.run(script.sweepScan, bucketKeys(c.prefix, bucket), {
      ...limits,
      owner,
      lockMs: c.sweepIntervalMs,
      lostDoorbellAfterMs: c.lostDoorbellAfterMs,
      listTtlMs: DIRECT_LIST_TTL_MS,
    });
  }

  /** Sweeper step for one thread; returns true when it was rung again. */
  async revive(member: string, mode: 'lease' | 'doorbell', expectedEpoch = 0): Promise<boolean> {
    const k = this.keys(decodeThread(member));
    const reply = await this.scripts.run(script.revive, k, { member, mode, epoch: expectedEpoch });
    if (reply.status !== 'ring') return false;
    await this.ring(k, reply.epoch);
    return true;
  }

  /**
   * Sweeper step for a thread whose owner is gone: re-rung when `owner` still holds it under `fence`,
   * so its batch is re-delivered elsewhere without waiting for the lease to expire.
   */
  async takeOver(member: string, owner: string, fence: number): Promise<boolean> {
    const k = this.keys(decodeThread(member));
    const reply = await this.scripts.run(script.takeover, k, { member, owner, fence });
    if (reply.status !== 'ring') return false;
    await this.ring(k, reply.epoch);
    return true;
  }

  /** Starts no new turn until `resume`; false when Redis knows nothing of the thread (nothing is created). */
  async pause(thread: string): Promise<boolean> {
    const k = this.keys(thread);
    return (await this.scripts.run(script.pause, k, { member: k.member })) === 'ok';
  }

  /** Lifts a pause, ringing the thread when messages wait; false when Redis knows nothing of it. */
  async resume(thread: string): Promise<boolean> {
    const k = this.keys(thread);
    const reply = await this.scripts.run(script.resume, k, { member: k.member });
    if (reply === 'notFound') return false;
    if (reply.status === 'ring') await this.ring(k, reply.epoch);
    return true;
  }

  /** Drops a dead-lettered batch for good; how many messages it held, or undefined when there is none. */
  async discard(thread: string, batchId: string): Promise<number | undefined> {
    const k = this.keys(thread);
    const reply = await this.scripts.run(script.discard, k, { member: k.member, batchId });
    return reply === 'notFound' ? undefined : reply;
  }

  /**
   * Whether Redis holds anything of the thread an operator could look at: its state, dead letters,
   * history, pending or dead replies (dead letters and dead replies outlive an idle thread's state).
   */
  async exists(thread: string): Promise<boolean> {
    const k = this.keys(thread);
    return (await this.redis.exists(k.state, k.history, k.replies)) > 0 || this.dead.holds(thread);
  }

  /** Puts a dead-lettered batch's messages back in the inbox; returns how many (0: no such batch). */
  async redrive(thread: string, batchId: string): Promise<number> {
    const k = this.keys(thread);
    const reply = await this.scripts.run(script.redrive, k, { member: k.member, batchId });
    if (reply.status === 'notFound') return 0;
    if (reply.status === 'ring') await this.ring(k, reply.epoch);
    return reply.count;
  }

  /** Records of ended batches (every status), newest first. */
  async history(thread: string, limit = this.config.historyLimit): Promise<BatchRecord[]> {
    const entries = await this.redis.xrevrange(this.keys(thread).history, '+', '-', 'COUNT', limit);
    // Each entry has one field, `record`, holding the JSON.
    return entries.map(([, fields]) => JSON.parse(fields[1]!) as BatchRecord);
  }

  /** The thread's dead letters, oldest first. */
  async deadLetters(thread: string): Promise<DeadLetter[]> {
    return (await this.dead.ofThread(thread, 'letters')) as unknown as DeadLetter[];
  }

  /**
   * Whether the thread has no state: its keys expired `idleTtlMs` after it went idle (or it never
   * ran). A thread with a message waiting, a turn running or a lease held always has one.
   */
  async expired(thread: string): Promise<boolean> {
    return (await this.redis.exists(this.keys(thread).state)) === 0;
  }

  async state(thread: string): Promise<ThreadState> {
    const k = this.keys(thread);
    const [fields, backlog] = await Promise.all([this.redis.hgetall(k.state), this.redis.xlen(k.inbox)]);
    return {
      status: (fields.status as ThreadState['status'] | undefined) ?? 'idle',
      batchId: fields.status === 'running' ? (fields.batch ?? null) : null,
      claimedAt: fields.claimed ? Number(fields.claimed) : null,
      epoch: Number(fields.epoch ?? 0),
      fence: Number(fields.fence ?? 0),
      owner: fields.owner ?? null,
      leaseExpiresAt: fields.lease ? Number(fields.lease) : null,
      paused: fields.paused === '1',
      generation: Number(fields.generation ?? 0),
      backlog,
    };
  }

  /**
   * The dedup window and receipts never outlive the thread's idle time: past it the thread starts afresh
   * anyway, and a key left behind would keep an expired thread's memory for its own longer window.
   */
  dedupWindowMs(): number {
    return Math.min(this.config.dedupTtlMs, this.config.idleTtlMs);
  }

  private receiptBounds() {
    const { receiptsMax, receiptTtlMs, idleTtlMs } = this.config;
    return { receiptsMax, receiptTtlMs: Math.min(receiptTtlMs, idleTtlMs) };
  }

  private async ring(k: ThreadKeys, epoch: number, options: RingOptions = {}): Promise<void> {
    await this.doorbell.ring(k.thread, k.member, epoch, options);
  }

  /** How a batch of the thread is formed and recorded: the arguments claim, commit and fail share. */
  private batchArgs(k: ThreadKeys) {
    const c = this.config;
    const mode = c.processingMode(k.thread);
    return {
      member: k.member,
      thread: k.thread,
      leaseMs: c.leaseMs,
      maxMessages: mode === 'per-message' ? 1 : c.maxBatchMessages,
      maxTokens: c.maxBatchTokens,
      lanes: mode === 'per-lane' ? 1 : 0,
      bucket: k.bucket,
      historyMax: c.historyLimit,
      historyMaxAgeMs: c.historyMaxAgeMs,
      idleTtlMs: c.idleTtlMs,
    };
  }

  private continueArgs(k: ThreadKeys, lease: Lease) {
    return { ...this.batchArgs(k), ...holder(k, lease), yieldAfterTurns: this.config.yieldAfterTurns };
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
        await this.ring(k, reply.epoch, this.config.affinity ? { prefer: { owner: lease.owner } } : {});
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
