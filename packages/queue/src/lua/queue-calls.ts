import type { BatchType, Origin, QueuedMessage } from '../batch.js';
import { approvalDecide } from './approval-calls.js';
import { auditComplete } from './audit-calls.js';
import { CONTROL_SCRIPTS } from './control-calls.js';
import { DEAD_BOUNDS, DEAD_SCRIPTS } from './dead-calls.js';
import { found, known, ok, type Rung, ringOrOk } from './decoders.js';
import { LISTING_SCRIPTS } from './listing-calls.js';
import { OUTBOX_SCRIPTS } from './outbox-calls.js';
import { paceReserve } from './pace-calls.js';
import { ROUTE_LINE_SCRIPTS } from './route-line-calls.js';
import { defineScript, type Reply } from './scripts.js';
import { ScriptStatus } from './status.js';
import { TURN_LIMIT_SCRIPTS } from './turn-limit-calls.js';

/**
 * The thread queue's Lua scripts (the outbox's, the admin listing's and the control commands' have files
 * of their own), and ALL_SCRIPTS, every script in this folder, declared once: its KEYS and ARGV by name
 * and the decoding of its reply. Arguments shared by several scripts carry the same name in all of them
 * (see lib/core.lua).
 */

/** A batch as claim, commit and fail hand it over; the caller adds the thread and owner it knows. */
export interface BatchReply {
  fence: number;
  id: string;
  type: BatchType;
  deliveries: number;
  expiresAt: number;
  generation: number;
  messages: QueuedMessage[];
}

/** After the status: fence, batch id, type, deliveries, lease expiry, generation, count, entries. */
const BATCH_HEADER = 8;
/** Per entry: stream id, then seq, id, tok, org, at, body (lib/batches.lua's batch_reply). */
const FIELDS_PER_ENTRY = 7;

/** `count` inbox entries from position `first` on, each its stream id and six fields. */
function entries(reply: Reply, count: number, first: number): QueuedMessage[] {
  const messages: QueuedMessage[] = [];
  for (let i = 0; i < count; i++) {
    const at = first + i * FIELDS_PER_ENTRY;
    messages.push({
      streamId: reply.str(at),
      seq: reply.num(at + 1),
      id: reply.str(at + 2),
      tokens: reply.num(at + 3),
      origin: reply.str(at + 4) as Origin,
      acceptedAt: reply.num(at + 5),
      body: reply.str(at + 6),
    });
  }
  return messages;
}

function batch(reply: Reply): BatchReply {
  const messages = entries(reply, reply.num(7), BATCH_HEADER);
  return {
    fence: reply.num(1),
    id: reply.str(2),
    type: reply.str(3) as BatchType,
    deliveries: reply.num(4),
    expiresAt: reply.num(5),
    generation: reply.num(6),
    messages,
  };
}

/** What follows a turn boundary (commit, or fail once it dead-lettered). */
export type AfterTurn =
  | { status: 'next'; batch: BatchReply }
  | { status: 'idle' }
  | { status: 'paused' }
  | ({ status: 'yield' } & Omit<Rung, 'status'>)
  | { status: 'fenced' };

function afterTurn(reply: Reply): AfterTurn {
  switch (reply.status) {
    case ScriptStatus.Next:
      return { status: 'next', batch: batch(reply) };
    case ScriptStatus.Idle:
      return { status: 'idle' };
    case ScriptStatus.Paused:
      return { status: 'paused' };
    case ScriptStatus.Yield:
      return { status: 'yield', epoch: reply.num(1) };
    case ScriptStatus.Fenced:
      return { status: 'fenced' };
    default:
      throw reply.unexpected();
  }
}

const CAPS = ['maxMessages', 'maxTokens', 'lanes'] as const;
const RETENTION = ['historyMax', 'historyMaxAgeMs', 'idleTtlMs'] as const;
/** A lease holder continuing after a turn boundary: who it is and how the next batch is formed. */
const CONTINUE = [
  'member',
  'thread',
  'owner',
  'fence',
  'leaseMs',
  ...CAPS,
  'bucket',
  'yieldAfterTurns',
] as const;

/** A thread's dedup window (lib/dedup.lua's dedup_seen and dedup_remember), which enqueue and revise share. */
const DEDUP_KEYS = ['dedup', 'dedupUntil'] as const;
/** The bounds of a thread's receipts, which enqueue, revise and noteRefusal all write. */
const RECEIPT_KEYS = ['receipts', 'receiptOrder', 'receiptids', 'receiptidsage'] as const;
const RECEIPT_BOUNDS = ['receiptsMax', 'receiptTtlMs'] as const;
/** Keys enqueue writes that claim, commit and fail set to expire when the thread goes idle. */
const IDLE_EXPIRING = ['gate', 'receipts', 'receiptOrder'] as const;
/** Where a batch is dead-lettered: the bucket's dead letters (lib/dead.lua's dead_letter_set). */
const DEAD_LETTER_KEYS = ['deadindex', 'deadrecords', 'deadthreads', 'deadclassof', 'deadclasses'] as const;
/** Where the previous layout kept a thread's dead letters, moved by whatever takes one (dead_take). */
const LEGACY_DEAD_LETTER_KEYS = ['dead', 'deadreasons'] as const;

export const enqueue = defineScript({
  name: 'enqueue',
  keys: ['state', 'inbox', 'sched', ...DEDUP_KEYS, 'gate', 'history', ...RECEIPT_KEYS, 'activity'],
  args: [
    'member',
    'dedupMember',
    'messageId',
    'tokens',
    'origin',
    'body',
    'lane',
    'maxBacklog',
    'dedupTtlMs',
    'requireInvolved',
    'maxBotTurns',
    'edit',
    ...RECEIPT_BOUNDS,
    'thread',
    'idleTtlMs',
    'controlChannel',
  ],
  decode(reply) {
    switch (reply.status) {
      case ScriptStatus.Ring:
        return {
          status: 'ring' as const,
          streamId: reply.str(1),
          seq: reply.num(2),
          epoch: reply.num(3),
          lastOwner: reply.str(4),
        };
      case ScriptStatus.Queued:
        return { status: 'queued' as const, streamId: reply.str(1), seq: reply.num(2) };
      case ScriptStatus.Duplicate:
        return { status: 'duplicate' as const, streamId: reply.str(1) };
      case ScriptStatus.BacklogFull:
        return { status: 'backlogFull' as const, backlog: reply.num(1) };
      case ScriptStatus.Gated:
        return { status: 'gated' as const, refusal: reply.str(1) as GateCondition };
      default:
        throw reply.unexpected();
    }
  },
});

export const revise = defineScript({
  name: 'revise',
  keys: ['state', 'inbox', ...DEDUP_KEYS, ...RECEIPT_KEYS],
  args: [
    'member',
    'dedupMember',
    'messageId',
    'action',
    'body',
    'tokens',
    'dedupTtlMs',
    'rewriteMax',
    'rewriteMaxBytes',
    ...RECEIPT_BOUNDS,
  ],
  decode(reply) {
    switch (reply.status) {
      case ScriptStatus.Ok:
        return { status: 'applied' as const, streamId: reply.str(1) };
      case ScriptStatus.Dispatched:
        return { status: 'dispatched' as const };
      case ScriptStatus.NotFound:
        return { status: 'notFound' as const };
      case ScriptStatus.Duplicate:
        return { status: 'duplicate' as const, streamId: reply.str(1) };
      default:
        throw reply.unexpected();
    }
  },
});

export const noteRefusal = defineScript({
  name: 'noteRefusal',
  keys: [...RECEIPT_KEYS, 'state'],
  args: ['member', 'messageId', 'reason', ...RECEIPT_BOUNDS],
  decode(reply) {
    ok(reply);
  },
});

/** What enqueue's gate conditions refuse with. */
export type GateCondition = 'not-addressed' | 'bot-turn-limit';

export const claim = defineScript({
  name: 'claim',
  keys: [
    'state',
    'inbox',
    'run',
    'sched',
    'batchseq',
    ...DEAD_LETTER_KEYS,
    'deadevicted',
    'history',
    ...IDLE_EXPIRING,
    'activity',
  ],
  args: [
    'member',
    'thread',
    'owner',
    'epoch',
    'leaseMs',
    ...CAPS,
    'bucket',
    'maxDeliveries',
    ...RETENTION,
    ...DEAD_BOUNDS,
  ],
  decode(reply) {
    switch (reply.status) {
      case ScriptStatus.Claimed:
        return { status: 'claimed' as const, batch: batch(reply) };
      case ScriptStatus.Stale:
        return { status: 'stale' as const };
      case ScriptStatus.Busy:
        return { status: 'busy' as const, retryInMs: reply.num(1) };
      case ScriptStatus.Empty:
        return { status: 'empty' as const };
      case ScriptStatus.Paused:
        return { status: 'paused' as const };
      default:
        throw reply.unexpected();
    }
  },
});

export const renew = defineScript({
  name: 'renew',
  keys: ['state', 'run'],
  args: ['member', 'owner', 'fence', 'leaseMs'],
  decode(reply) {
    if (reply.status === ScriptStatus.Fenced) return { status: 'fenced' as const };
    return { status: 'ok' as const, expiresAt: ok(reply).num(1) };
  },
});

export const commit = defineScript({
  name: 'commit',
  keys: [
    'state',
    'inbox',
    'run',
    'sched',
    'history',
    'batchseq',
    'replies',
    'replydue',
    ...IDLE_EXPIRING,
    'activity',
    'session',
  ],
  args: [...CONTINUE, ...RETENTION, 'reply', 'stopReason', 'outbound', 'through', 'session', 'usage'],
  decode: afterTurn,
});

/** What a steer took into the in-flight batch (steer-3.lua). */
export type SteerReply =
  | { status: 'taken'; messages: QueuedMessage[] }
  | { status: 'full' }
  | { status: 'fenced' };

export const steer = defineScript({
  name: 'steer',
  keys: ['state', 'inbox', 'receipts'],
  args: ['owner', 'fence', 'batch', 'through', 'maxMessages', 'maxTokens', 'lanes'],
  decode(reply): SteerReply {
    switch (reply.status) {
      case ScriptStatus.Ok:
        return { status: 'taken', messages: entries(reply, reply.num(1), 2) };
      case ScriptStatus.BatchFull:
        return { status: 'full' };
      case ScriptStatus.Fenced:
        return { status: 'fenced' };
      default:
        throw reply.unexpected();
    }
  },
});

/** The failed batch waits `delayMs` (rung again under `epoch`), whole (`retry`) or split (`split`). */
type RetryLater =
  | { status: 'retry'; epoch: number; delayMs: number }
  | { status: 'split'; epoch: number; delayMs: number };

export const fail = defineScript({
  name: 'fail',
  keys: [
    'state',
    'inbox',
    'run',
    'sched',
    'batchseq',
    ...DEAD_LETTER_KEYS,
    'deadevicted',
    'history',
    'replies',
    'replydue',
    ...IDLE_EXPIRING,
    'activity',
  ],
  args: [
    ...CONTINUE,
    ...RETENTION,
    'reason',
    'maxFailures',
    'retryDelayMs',
    'outboundIfDead',
    'split',
    ...DEAD_BOUNDS,
  ],
  decode(reply): AfterTurn | RetryLater {
    if (reply.status === ScriptStatus.Retry)
      return { status: 'retry', epoch: reply.num(1), delayMs: reply.num(2) };
    if (reply.status === ScriptStatus.Split)
      return { status: 'split', epoch: reply.num(1), delayMs: reply.num(2) };
    return afterTurn(reply);
  },
});

export const abandon = defineScript({
  name: 'abandon',
  keys: ['state', 'run', 'sched'],
  args: ['member', 'owner', 'fence'],
  decode(reply): Rung | { status: 'fenced' } {
    if (reply.status === ScriptStatus.Fenced) return { status: 'fenced' };
    if (reply.status === ScriptStatus.Ring) return { status: 'ring', epoch: reply.num(1) };
    throw reply.unexpected();
  },
});

/** A batch put back by `defer`: rung again under `epoch` after `delayMs`. */
export interface Deferred {
  status: 'deferred';
  epoch: number;
  delayMs: number;
  /** How long the batch has been waiting since it was first put back (or its wait began). */
  waitedMs: number;
  /** Whether the thread's notice entered the outbox now. */
  noticed: boolean;
}

export const defer = defineScript({
  name: 'defer',
  keys: ['state', 'run', 'sched', 'replies', 'replydue'],
  args: [
    'member',
    'owner',
    'fence',
    'reachedAgent',
    'baseDelayMs',
    'maxDelayMs',
    'noticeAfterMs',
    'notice',
    'waitingSince',
  ],
  decode(reply): Deferred | { status: 'fenced' } {
    if (reply.status === ScriptStatus.Fenced) return { status: 'fenced' };
    if (reply.status !== ScriptStatus.Deferred) throw reply.unexpected();
    return {
      status: 'deferred',
      epoch: reply.num(1),
      delayMs: reply.num(2),
      waitedMs: reply.num(3),
      noticed: reply.num(4) === 1,
    };
  },
});

/** Whether the notice of a batch put back by `defer` entered the outbox now. */
export const noticeDeferred = defineScript({
  name: 'noticeDeferred',
  keys: ['state', 'replies', 'replydue'],
  args: ['member', 'batch', 'notice'],
  decode: (reply) => ok(reply).num(1) === 1,
});

export const revive = defineScript({
  name: 'revive',
  keys: ['state', 'run', 'sched'],
  args: ['member', 'mode', 'epoch'],
  decode: ringOrOk,
});

export const takeover = defineScript({
  name: 'takeover',
  keys: ['state', 'run', 'sched'],
  args: ['member', 'owner', 'fence'],
  decode: ringOrOk,
});

export const pause = defineScript({
  name: 'pause',
  keys: ['state', 'paused'],
  args: ['member'],
  decode: known((reply) => {
    ok(reply);
    return 'ok' as const;
  }),
});

export const resume = defineScript({
  name: 'resume',
  keys: ['state', 'inbox', 'run', 'sched', 'paused'],
  args: ['member'],
  decode: known(ringOrOk),
});

export const redrive = defineScript({
  name: 'redrive',
  keys: [
    'state',
    'inbox',
    'run',
    'sched',
    ...DEAD_LETTER_KEYS,
    ...LEGACY_DEAD_LETTER_KEYS,
    'history',
    ...IDLE_EXPIRING,
  ],
  args: ['member', 'batchId'],
  decode(reply) {
    switch (reply.status) {
      case ScriptStatus.Ring:
        return { status: 'ring' as const, epoch: reply.num(1), count: reply.num(2) };
      case ScriptStatus.Queued:
        return { status: 'queued' as const, count: reply.num(1) };
      case ScriptStatus.NotFound:
        return { status: 'notFound' as const };
      default:
        throw reply.unexpected();
    }
  },
});

export const discard = defineScript({
  name: 'discard',
  keys: [...DEAD_LETTER_KEYS, ...LEGACY_DEAD_LETTER_KEYS],
  args: ['member', 'batchId'],
  decode: known((reply) => ok(reply).num(1)),
});

/** What one worker's pass over a bucket found (sweep-scan-4.lua); the members as they appear in keys. */
export interface BucketScan {
  /** Redis's clock when the bucket was read. */
  now: number;
  /** Leases expired (the sweep lists are empty unless this pass holds the bucket's lock). */
  expired: string[];
  /** Leases running, whose owners may be gone. */
  leased: string[];
  /** Threads scheduled longer than the lost-doorbell grace period ago. */
  waiting: string[];
  /** Threads with a reply due now. */
  repliesDue: string[];
}

export const sweepScan = defineScript({
  name: 'sweepScan',
  keys: ['sweepLock', 'run', 'sched', 'replydue'],
  args: ['owner', 'lockMs', 'lostDoorbellAfterMs', 'sweepBatch', 'dueBatch'],
  decode(reply): BucketScan | undefined {
    if (reply.status === ScriptStatus.Empty) return undefined;
    let at = 2;
    const list = () => {
      const count = reply.num(at);
      const members = Array.from({ length: count }, (_, i) => reply.str(at + 1 + i));
      at += count + 1;
      return members;
    };
    const now = ok(reply).num(1);
    return { now, expired: list(), leased: list(), waiting: list(), repliesDue: list() };
  },
});

export const affinityPush = defineScript({
  name: 'affinityPush',
  keys: ['presence', 'doorbells'],
  args: ['thread', 'epoch', 'ttlMs'],
  decode: found,
});

/** The doorbells of a worker's own list that waited past `waitMs`, taken off it (raw list items). */
export const passOn = defineScript({
  name: 'passOn',
  keys: ['doorbells'],
  args: ['waitMs'],
  decode(reply): string[] {
    const items = ok(reply);
    return Array.from({ length: items.length - 1 }, (_, i) => items.str(i + 1));
  },
});

/** The scripts of the thread queue (the doorbell's own is loaded by the doorbell). */
export const QUEUE_SCRIPTS = [
  enqueue,
  revise,
  noteRefusal,
  claim,
  renew,
  commit,
  steer,
  fail,
  defer,
  noticeDeferred,
  abandon,
  revive,
  takeover,
  sweepScan,
  pause,
  resume,
  redrive,
  discard,
];

export const ALL_SCRIPTS = [
  ...QUEUE_SCRIPTS,
  ...OUTBOX_SCRIPTS,
  ...LISTING_SCRIPTS,
  ...CONTROL_SCRIPTS,
  ...DEAD_SCRIPTS,
  auditComplete,
  affinityPush,
  passOn,
  paceReserve,
  approvalDecide,
  ...TURN_LIMIT_SCRIPTS,
  ...ROUTE_LINE_SCRIPTS,
];
