import type { Redis } from 'ioredis';
import {
  type Batch,
  type BatchRecord,
  type DeadLetter,
  type Lease,
  type Origin,
  parseBatchReply,
  type TurnReport,
} from './batch.js';
import type { Doorbell, RingOptions } from './doorbells.js';
import { scriptError } from './errors.js';
import type { QueueConfig } from './queue-config.js';
import { ScriptStatus } from './script-status.js';
import { type ScriptReply, Scripts } from './scripts.js';
import { bucketKeys, decodeThread, type ThreadKeys, threadKeys } from './thread-keys.js';

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
}

export type EnqueueResult =
  | { outcome: 'accepted'; streamId: string; seq: number; rang: boolean }
  | { outcome: 'duplicate'; streamId: string };

/** What the holder of a lease does next after a turn boundary. */
export type NextStep =
  | { kind: 'batch'; batch: Batch }
  | { kind: 'idle' }
  | { kind: 'paused' }
  | { kind: 'yielded' }
  | { kind: 'retry'; delayMs: number };

export type ClaimResult =
  | { kind: 'batch'; batch: Batch }
  | { kind: 'stale' }
  | { kind: 'busy'; retryInMs: number }
  | { kind: 'empty' }
  | { kind: 'paused' };

export interface ThreadState {
  status: 'idle' | 'scheduled' | 'running';
  epoch: number;
  fence: number;
  owner: string | null;
  leaseExpiresAt: number | null;
  paused: boolean;
  generation: number;
  /** Messages in the inbox: in flight plus waiting. */
  backlog: number;
}

/**
 * The per-thread turn queue. Every state transition is one Lua script; this class builds keys, turns
 * replies into typed results and rings doorbells when a script says so.
 */
export class ThreadQueue {
  private readonly scripts: Scripts;

  constructor(
    readonly redis: Redis,
    readonly config: Readonly<QueueConfig>,
    private readonly doorbell: Doorbell,
  ) {
    this.scripts = new Scripts(redis);
  }

  keys(thread: string): ThreadKeys {
    return threadKeys(this.config.prefix, this.config.buckets, thread);
  }

  /** Readiness: every script is in Redis's cache (reloaded after a Redis restart). */
  async ensureScripts(): Promise<number> {
    return this.scripts.ensureLoaded();
  }

  async enqueue(thread: string, message: NewMessage): Promise<EnqueueResult> {
    const k = this.keys(thread);
    const reply = await this.scripts.run(
      'enqueue',
      [k.state, k.inbox, k.bucketKeys.sched, k.dedup(message.idempotencyKey ?? message.id), k.gate],
      [
        k.member,
        message.id,
        message.tokens ?? this.config.countTokens(message.body),
        message.origin ?? 'user',
        message.body,
        this.config.maxBacklog,
        this.config.dedupTtlMs,
        message.lane ?? '',
        this.config.gateTtlMs,
      ],
    );
    const status = reply[0] as ScriptStatus;
    if (status === ScriptStatus.Duplicate) return { outcome: 'duplicate', streamId: String(reply[1]) };
    if (status !== ScriptStatus.Ring && status !== ScriptStatus.Queued) {
      throw scriptError(status, thread, { backlog: Number(reply[1]) });
    }
    const accepted = { outcome: 'accepted' as const, streamId: String(reply[1]), seq: Number(reply[2]) };
    if (status === ScriptStatus.Queued) return { ...accepted, rang: false };
    // The message is durable already; a doorbell lost here is re-rung by the sweeper.
    const lastOwner = String(reply[4]);
    const options: RingOptions =
      this.config.affinity && lastOwner !== ''
        ? { prefer: { owner: lastOwner, waitMs: this.config.affinityWaitMs } }
        : {};
    const rang = await this.ring(k, Number(reply[3]), options).then(
      () => true,
      () => false,
    );
    return { ...accepted, rang };
  }

  async claim(thread: string, epoch: number, owner: string): Promise<ClaimResult> {
    const k = this.keys(thread);
    const b = k.bucketKeys;
    const reply = await this.scripts.run(
      'claim',
      [k.state, k.inbox, b.run, b.sched, b.batchseq, k.dead, b.deadindex, k.history],
      [
        k.member,
        epoch,
        owner,
        this.config.leaseMs,
        ...this.caps(thread),
        k.bucket,
        this.config.maxDeliveries,
        thread,
        ...this.retention(),
      ],
    );
    switch (reply[0] as ScriptStatus) {
      case ScriptStatus.Claimed:
        return { kind: 'batch', batch: parseBatchReply(thread, owner, reply) };
      case ScriptStatus.Busy:
        return { kind: 'busy', retryInMs: Number(reply[1]) };
      case ScriptStatus.Empty:
        return { kind: 'empty' };
      case ScriptStatus.Paused:
        return { kind: 'paused' };
      default:
        return { kind: 'stale' };
    }
  }

  /** Extends the lease; throws LeaseLostError when the thread is no longer ours. */
  async renew(lease: Lease): Promise<number> {
    const k = this.keys(lease.thread);
    const reply = await this.scripts.run(
      'renew',
      [k.state, k.bucketKeys.run],
      [k.member, lease.owner, lease.fence, this.config.leaseMs],
    );
    if (reply[0] !== ScriptStatus.Ok) throw scriptError(reply[0] as ScriptStatus, lease.thread, lease);
    return Number(reply[1]);
  }

  /**
   * Commits the in-flight batch with what the turn reported (kept in its history record) and returns
   * what to do next; throws LeaseLostError when fenced out.
   */
  async commit(lease: Lease, report: TurnReport): Promise<NextStep> {
    const k = this.keys(lease.thread);
    const b = k.bucketKeys;
    const c = this.config;
    const reply = await this.scripts.run(
      'commit',
      [k.state, k.inbox, b.run, b.sched, k.history, b.batchseq],
      [
        k.member,
        lease.owner,
        lease.fence,
        c.leaseMs,
        ...this.caps(lease.thread),
        k.bucket,
        c.yieldAfterTurns,
        ...this.retention(),
        lease.thread,
        report.reply,
        report.stopReason,
      ],
    );
    return this.nextStep(k, lease, reply);
  }

  /**
   * Records a failed turn: the batch is retried later, or dead-lettered after `maxFailures`; a
   * `final` failure (retrying cannot help) is dead-lettered at once.
   */
  async fail(lease: Lease, reason: string, final = false): Promise<NextStep> {
    const k = this.keys(lease.thread);
    const b = k.bucketKeys;
    const c = this.config;
    const reply = await this.scripts.run(
      'fail',
      [k.state, k.inbox, b.run, b.sched, b.batchseq, k.dead, b.deadindex, k.history],
      [
        k.member,
        lease.owner,
        lease.fence,
        reason,
        final ? 1 : c.maxFailures,
        c.retryDelayMs,
        c.leaseMs,
        ...this.caps(lease.thread),
        k.bucket,
        c.yieldAfterTurns,
        lease.thread,
        ...this.retention(),
      ],
    );
    return this.nextStep(k, lease, reply);
  }

  /** Hands the thread back (shutdown): the in-flight batch is re-delivered first, to whoever claims. */
  async abandon(lease: Lease): Promise<boolean> {
    const k = this.keys(lease.thread);
    const reply = await this.scripts.run(
      'abandon',
      [k.state, k.bucketKeys.run, k.bucketKeys.sched],
      [k.member, lease.owner, lease.fence],
    );
    if (reply[0] !== ScriptStatus.Ring) return false;
    await this.ring(k, Number(reply[1]));
    return true;
  }

  /** Sweeper step for one thread; returns true when it was rung again. */
  async revive(member: string, mode: 'lease' | 'doorbell', expectedEpoch = 0): Promise<boolean> {
    const k = this.keys(decodeThread(member));
    const reply = await this.scripts.run(
      'revive',
      [k.state, k.bucketKeys.run, k.bucketKeys.sched],
      [member, mode, expectedEpoch],
    );
    if (reply[0] !== ScriptStatus.Ring) return false;
    await this.ring(k, Number(reply[1]));
    return true;
  }

  async pause(thread: string): Promise<void> {
    await this.scripts.run('pause', [this.keys(thread).state], []);
  }

  async resume(thread: string): Promise<void> {
    const k = this.keys(thread);
    const reply = await this.scripts.run(
      'resume',
      [k.state, k.inbox, k.bucketKeys.run, k.bucketKeys.sched],
      [k.member],
    );
    if (reply[0] === ScriptStatus.Ring) await this.ring(k, Number(reply[1]));
  }

  /** Drops waiting messages, never the in-flight batch; returns how many were dropped. */
  async dropBuffered(thread: string): Promise<number> {
    const k = this.keys(thread);
    const reply = await this.scripts.run('dropBuffered', [k.state, k.inbox], []);
    return Number(reply[1]);
  }

  /** Drops waiting messages and history and bumps the session generation. */
  async reset(thread: string): Promise<{ dropped: number; generation: number }> {
    const k = this.keys(thread);
    const reply = await this.scripts.run('reset', [k.state, k.inbox, k.history], []);
    return { dropped: Number(reply[1]), generation: Number(reply[2]) };
  }

  async redrive(thread: string, batchId: string): Promise<number> {
    const k = this.keys(thread);
    const b = k.bucketKeys;
    const reply = await this.scripts.run(
      'redrive',
      [k.state, k.inbox, b.run, b.sched, k.dead, b.deadindex],
      [k.member, batchId],
    );
    if (reply[0] === ScriptStatus.NotFound) return 0;
    if (reply[0] === ScriptStatus.Ring) {
      await this.ring(k, Number(reply[1]));
      return Number(reply[2]);
    }
    return Number(reply[1]);
  }

  /** Records of ended batches (every status), newest first. */
  async history(thread: string, limit = this.config.historyLimit): Promise<BatchRecord[]> {
    const entries = await this.redis.xrevrange(this.keys(thread).history, '+', '-', 'COUNT', limit);
    // Each entry has one field, `record`, holding the JSON.
    return entries.map(([, fields]) => JSON.parse(fields[1]!) as BatchRecord);
  }

  async deadLetters(thread: string): Promise<DeadLetter[]> {
    const records = await this.redis.lrange(this.keys(thread).dead, 0, -1);
    return records.map((r) => JSON.parse(r) as DeadLetter);
  }

  /** Threads with dead letters, across all buckets. */
  async threadsWithDeadLetters(): Promise<string[]> {
    const threads: string[] = [];
    for (let bucket = 0; bucket < this.config.buckets; bucket++) {
      const members = await this.redis.zrange(bucketKeys(this.config.prefix, bucket).deadindex, 0, -1);
      threads.push(...members.map(decodeThread));
    }
    return threads;
  }

  async state(thread: string): Promise<ThreadState> {
    const k = this.keys(thread);
    const [fields, backlog] = await Promise.all([this.redis.hgetall(k.state), this.redis.xlen(k.inbox)]);
    return {
      status: (fields.status as ThreadState['status'] | undefined) ?? 'idle',
      epoch: Number(fields.epoch ?? 0),
      fence: Number(fields.fence ?? 0),
      owner: fields.owner ?? null,
      leaseExpiresAt: fields.lease ? Number(fields.lease) : null,
      paused: fields.paused === '1',
      generation: Number(fields.generation ?? 0),
      backlog,
    };
  }

  private async ring(k: ThreadKeys, epoch: number, options: RingOptions = {}): Promise<void> {
    await this.doorbell.ring(k.thread, k.member, epoch, options);
  }

  /** Batch caps of the thread's processing mode: max messages, max tokens, lanes flag. */
  private caps(thread: string): [number, number, number] {
    const mode = this.config.processingMode(thread);
    const maxMessages = mode === 'per-message' ? 1 : this.config.maxBatchMessages;
    return [maxMessages, this.config.maxBatchTokens, mode === 'per-lane' ? 1 : 0];
  }

  private retention(): [number, number] {
    return [this.config.historyLimit, this.config.historyMaxAgeMs];
  }

  private async nextStep(k: ThreadKeys, lease: Lease, reply: ScriptReply): Promise<NextStep> {
    switch (reply[0] as ScriptStatus) {
      case ScriptStatus.Next:
        return { kind: 'batch', batch: parseBatchReply(lease.thread, lease.owner, reply) };
      case ScriptStatus.Idle:
        return { kind: 'idle' };
      case ScriptStatus.Paused:
        return { kind: 'paused' };
      case ScriptStatus.Yield:
        await this.ring(k, Number(reply[1]));
        return { kind: 'yielded' };
      case ScriptStatus.Retry:
        await this.ring(k, Number(reply[1]), { delayMs: Number(reply[2]) });
        return { kind: 'retry', delayMs: Number(reply[2]) };
      default:
        throw scriptError(reply[0] as ScriptStatus, lease.thread, lease);
    }
  }
}
