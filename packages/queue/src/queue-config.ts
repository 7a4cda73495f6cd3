import type { AckReplicas } from './replication.js';
import { MAX_BUCKETS } from './thread-keys.js';

export { DEFAULT_REPLY_RETRY } from './reply-retry-policy.js';

/** The worker pool of threads whose route names none, and of workers given none (docs/adr/0060). */
export const DEFAULT_POOL = 'default';

/**
 * How a thread's messages are grouped into turns: `per-thread` batches everything waiting, `per-lane`
 * ends a batch where the sender changes (the session and the one-turn-per-thread rule stay per thread),
 * `per-message` runs one message per turn.
 */
export type ProcessingMode = 'per-thread' | 'per-lane' | 'per-message';

/**
 * How a thread's batches are formed: its processing mode and, where its route sets them (docs/adr/0058),
 * caps of its own over `maxBatchMessages` and `maxBatchTokens`.
 */
export interface ThreadBatching {
  mode: ProcessingMode;
  maxMessages?: number;
  maxTokens?: number;
}

export interface QueueConfig {
  /** Namespace of every key (ours and the doorbell queue's). */
  prefix: string;
  /** Fixed for the life of a deployment: changing it moves threads to other buckets. */
  buckets: number;
  /**
   * Doorbell queues, each on its own hash tag: in a Redis Cluster, one per primary spreads dispatch
   * over all of them. Every process must agree (a ring on a queue no worker reads waits for the
   * sweeper); every worker consumes all of them.
   */
  doorbellQueues: number;
  leaseMs: number;
  maxBatchMessages: number;
  maxBatchTokens: number;
  /** Messages a thread may hold (in flight + waiting) before enqueue refuses. */
  maxBacklog: number;
  /**
   * How long a message's (or an edit's) idempotency key absorbs a retry; never longer than `idleTtlMs`,
   * past which an idle thread starts afresh anyway and must leave no key behind.
   */
  dedupTtlMs: number;
  /**
   * How long a thread's keys (state, inbox, history, receipts, session record, parent, gate state) outlive its
   * last activity. State, inbox, history, receipts and gate state expire only while nothing is buffered
   * or in flight; the session record and the parent count from their own write (a thread busy for
   * longer than this without a new session loses them: the next session starts with the history
   * block). After that a new message starts the thread afresh.
   */
  idleTtlMs: number;
  /**
   * Replicas that must confirm an accepted message (WAIT) before enqueue returns: `auto` (one whenever
   * the thread's primary has a replica online), a fixed count, or 0 (none). With one, a failover of
   * the thread's primary cannot lose an acknowledged message; a confirmation slower than
   * `ackReplicasTimeoutMs` refuses it (ingress answers 503, the platform retries, dedup absorbs it).
   */
  ackReplicas: AckReplicas;
  ackReplicasTimeoutMs: number;
  /** A thread that ran this many turns in a row goes to the back of the doorbell line. */
  yieldAfterTurns: number;
  /** Batch records kept per thread: at most this many, none older than `historyMaxAgeMs`. */
  historyLimit: number;
  historyMaxAgeMs: number;
  /** How a thread's batches are formed (by its route, or by the platform its key starts with). */
  batching: (thread: string) => ThreadBatching | Promise<ThreadBatching>;
  /**
   * Session affinity: a ring prefers the worker that ran the thread's last turn while it is alive and
   * taking doorbells; that worker passes it on to the shared queue if it has had no free slot for
   * `affinityWaitMs` (keep it below `lostDoorbellAfterMs`, or the sweeper re-rings it first;
   * SESSION_AFFINITY_WAIT_MS is capped so). A worker with affinity off says it takes no direct
   * doorbells (presence '0').
   */
  affinity: boolean;
  affinityWaitMs: number;
  /**
   * A worker's presence expires this long after its last refresh (it refreshes three times as often);
   * the sweeper then hands the threads it held to other workers without waiting out their leases.
   */
  presenceTtlMs: number;
  /** Failed turns of one batch before it is dead-lettered. */
  maxFailures: number;
  retryDelayMs: number;
  /** Deliveries of one batch (crashes, hand-backs) before it is dead-lettered. */
  maxDeliveries: number;
  /**
   * A batch whose turn could not start (its agent did not start) is rung again after this long,
   * doubled with each deferral up to `deferMaxDelayMs`.
   */
  deferDelayMs: number;
  deferMaxDelayMs: number;
  sweepIntervalMs: number;
  /** A scheduled thread whose doorbell job is gone after this long is rung again. */
  lostDoorbellAfterMs: number;
  /**
   * Receipts kept per thread (where each platform message went: queued, batched, edited, deleted,
   * refused); the oldest go first. They also index buffered messages for edits and deletes, so keep it
   * well above `maxBacklog`.
   */
  receiptsMax: number;
  /**
   * A quiet thread's receipts expire this long after the last one was written (at most `idleTtlMs`);
   * while the thread holds a message they are kept.
   */
  receiptTtlMs: number;
  /**
   * An edit of a waiting message rewrites the entries from it on (Redis is held meanwhile): at most this
   * many entries and bytes. Past them the edit travels as an event of its own, as after dispatch.
   */
  editRewriteMax: number;
  editRewriteMaxBytes: number;
  /** Token cost of a message body that arrives without one, for `maxBatchTokens`. */
  countTokens: (body: string) => number;
  /**
   * Dead letters and dead replies (each kind apart) are kept this long for an operator to re-drive,
   * at most `deadMaxPerThread` of one thread and `deadMax` in all, spread over the buckets (each keeps
   * its share); the oldest go first, counted
   * (docs/adr/0043-dead-letters-bounded-and-grouped-by-class.md).
   */
  deadTtlMs: number;
  deadMaxPerThread: number;
  deadMax: number;
}

/** Rough default until a real tokenizer is plugged in: about four characters per token. */
const approximateTokens = (body: string) => Math.ceil(body.length / 4);

export const queueDefaults: Readonly<QueueConfig> = Object.freeze({
  prefix: 'trib',
  buckets: 64,
  doorbellQueues: 1,
  leaseMs: 30_000,
  maxBatchMessages: 10,
  maxBatchTokens: 24_000,
  maxBacklog: 1_000,
  dedupTtlMs: 24 * 60 * 60 * 1000,
  idleTtlMs: 7 * 24 * 60 * 60 * 1000,
  yieldAfterTurns: 20,
  ackReplicas: 'auto',
  ackReplicasTimeoutMs: 100,
  // Records carry bodies and replies; a fresh session is given only a token budget's worth of them.
  historyLimit: 200,
  historyMaxAgeMs: 7 * 24 * 60 * 60 * 1000,
  batching: () => ({ mode: 'per-thread' as const }),
  affinity: true,
  affinityWaitMs: 500,
  presenceTtlMs: 2_000,
  maxFailures: 3,
  retryDelayMs: 2_000,
  maxDeliveries: 10,
  deferDelayMs: 1_000,
  deferMaxDelayMs: 30_000,
  sweepIntervalMs: 1_000,
  lostDoorbellAfterMs: 5_000,
  receiptsMax: 5_000,
  receiptTtlMs: 7 * 24 * 60 * 60 * 1000,
  // About a millisecond of Redis time, measured with bench/edits.ts.
  editRewriteMax: 100,
  editRewriteMaxBytes: 1024 * 1024,
  countTokens: approximateTokens,
  deadTtlMs: 14 * 24 * 60 * 60 * 1000,
  deadMaxPerThread: 1_000,
  // A dead letter holds its batch's bodies: a few KB each, so about 100 MB at the cap.
  deadMax: 50_000,
});

/** Defaults of the store beside the queue's, for the configuration to document and validate the same. */
export const storeDefaults = Object.freeze({
  /** Entries the operators' audit log keeps. */
  auditMaxEntries: 10_000,
});

const positiveIntegers = [
  'leaseMs',
  'maxBatchMessages',
  'maxBatchTokens',
  'maxBacklog',
  'dedupTtlMs',
  'yieldAfterTurns',
  'ackReplicasTimeoutMs',
  'historyLimit',
  'historyMaxAgeMs',
  'affinityWaitMs',
  'idleTtlMs',
  'presenceTtlMs',
  'maxFailures',
  'maxDeliveries',
  'deferDelayMs',
  'deferMaxDelayMs',
  'sweepIntervalMs',
  'lostDoorbellAfterMs',
  'receiptsMax',
  'receiptTtlMs',
  'editRewriteMax',
  'editRewriteMaxBytes',
  'deadTtlMs',
  'deadMaxPerThread',
  'deadMax',
] as const;

/** The dead sets' bounds as their scripts take them (lib/dead.lua's dead_bounds). */
export interface DeadBounds {
  deadTtlMs: number;
  deadMaxPerThread: number;
  /** The fleet's cap as each bucket's share of it: a bucket's keys may live on any Cluster node. */
  deadMaxPerBucket: number;
}

export function deadBounds(config: Readonly<QueueConfig>): DeadBounds {
  return {
    deadTtlMs: config.deadTtlMs,
    deadMaxPerThread: config.deadMaxPerThread,
    deadMaxPerBucket: Math.max(1, Math.floor(config.deadMax / config.buckets)),
  };
}

/**
 * The dedup window and receipts never outlive the thread's idle time: past it the thread starts afresh
 * anyway, and a key left behind would keep an expired thread's memory for its own longer window.
 */
export function dedupWindowMs(config: Readonly<QueueConfig>): number {
  return Math.min(config.dedupTtlMs, config.idleTtlMs);
}

/** The receipts' bounds as their scripts take them (lib/receipts.lua), within the thread's idle time. */
export function receiptBounds(config: Readonly<QueueConfig>): { receiptsMax: number; receiptTtlMs: number } {
  return { receiptsMax: config.receiptsMax, receiptTtlMs: Math.min(config.receiptTtlMs, config.idleTtlMs) };
}

/** Defaults plus overrides, validated and frozen; throws naming the first bad option. */
export function queueConfig(overrides: Partial<QueueConfig> = {}): Readonly<QueueConfig> {
  const config = { ...queueDefaults, ...overrides };
  for (const name of positiveIntegers) {
    if (!Number.isInteger(config[name]) || config[name] <= 0) {
      throw new RangeError(`queue option ${name} must be a positive integer, got ${config[name]}`);
    }
  }
  if (config.ackReplicas !== 'auto' && !(Number.isInteger(config.ackReplicas) && config.ackReplicas >= 0)) {
    throw new RangeError(
      `queue option ackReplicas must be 'auto' or a non-negative integer, got ${config.ackReplicas}`,
    );
  }
  if (!Number.isInteger(config.retryDelayMs) || config.retryDelayMs < 0) {
    throw new RangeError(
      `queue option retryDelayMs must be a non-negative integer, got ${config.retryDelayMs}`,
    );
  }
  if (
    !Number.isInteger(config.doorbellQueues) ||
    config.doorbellQueues < 1 ||
    config.doorbellQueues > config.buckets
  ) {
    throw new RangeError(
      `queue option doorbellQueues must be an integer in 1..buckets (${config.buckets}), got ${config.doorbellQueues}`,
    );
  }
  if (!Number.isInteger(config.buckets) || config.buckets < 1 || config.buckets > MAX_BUCKETS) {
    throw new RangeError(
      `queue option buckets must be an integer in 1..${MAX_BUCKETS}, got ${config.buckets}`,
    );
  }
  if (!/^[A-Za-z0-9_.-]+$/.test(config.prefix)) {
    throw new RangeError(
      `queue option prefix may only hold letters, digits, '_', '.', '-': ${config.prefix}`,
    );
  }
  return Object.freeze(config);
}
