import { DEAD_BOUNDS } from './dead-calls.js';
import { found, ok, okOrFenced } from './decoders.js';
import { defineScript } from './scripts.js';
import { ScriptStatus } from './status.js';

/** The reply outbox's Lua scripts (reply-*.lua), declared as queue-calls.ts declares the queue's. */

/** Where a dead reply is kept: the bucket's dead replies (lib/dead.lua's dead_reply_set). */
const DEAD_REPLY_KEYS = [
  'deadreplyindex',
  'deadreplyrecords',
  'deadreplythreads',
  'deadreplyclassof',
  'deadreplyclasses',
] as const;
/** Where the previous layout kept a thread's dead replies, moved by whatever takes one (dead_take). */
const LEGACY_DEAD_REPLY_KEYS = ['deadReplies', 'deadreplyreasons'] as const;
/** The reply deliverer's holder arguments: the thread, and who holds its outbox lock. */
const REPLY_HOLDER = ['member', 'owner'] as const;
const REPLY_LOCKED = ['replies', 'replyLock', 'replydue'] as const;

export const replyTake = defineScript({
  name: 'replyTake',
  keys: [...REPLY_LOCKED],
  args: [...REPLY_HOLDER, 'lockMs'],
  decode(reply) {
    switch (reply.status) {
      case ScriptStatus.Ok:
        return { status: 'reply' as const, json: reply.str(1) };
      case ScriptStatus.Busy:
        return { status: 'busy' as const };
      case ScriptStatus.Empty:
        return { status: 'empty' as const };
      default:
        throw reply.unexpected();
    }
  },
});

/**
 * After a delivery: `lost` (another deliverer took over), `more` (replies wait behind it; `next` is the
 * next one when the done took it) or `empty`.
 */
export type DoneOutcome = { kind: 'lost' } | { kind: 'more'; next?: string } | { kind: 'empty' };

export const replyDone = defineScript({
  name: 'replyDone',
  keys: [...REPLY_LOCKED, 'postedParts'],
  args: [...REPLY_HOLDER, 'id', 'part', 'messageId', 'retentionMs', 'lockMs'],
  decode(reply): DoneOutcome {
    if (okOrFenced(reply) === 'fenced') return { kind: 'lost' };
    if (reply.num(1) === 0) return { kind: 'empty' };
    return reply.length > 2 ? { kind: 'more', next: reply.str(2) } : { kind: 'more' };
  },
});

export const replyPart = defineScript({
  name: 'replyPart',
  keys: ['postedParts'],
  args: ['part', 'messageId', 'retentionMs'],
  decode(reply) {
    ok(reply);
  },
});

export const replyRetry = defineScript({
  name: 'replyRetry',
  keys: [...REPLY_LOCKED],
  args: [...REPLY_HOLDER, 'id', 'delayMs', 'error'],
  decode: okOrFenced,
});

export const replyBury = defineScript({
  name: 'replyBury',
  keys: [...REPLY_LOCKED, ...DEAD_REPLY_KEYS, 'deadevicted'],
  args: [...REPLY_HOLDER, 'id', 'error', ...DEAD_BOUNDS],
  decode: okOrFenced,
});

export const replyRedrive = defineScript({
  name: 'replyRedrive',
  keys: [...DEAD_REPLY_KEYS, ...LEGACY_DEAD_REPLY_KEYS, 'replies', 'replydue'],
  args: ['member', 'id'],
  decode: found,
});

export const replyDiscard = defineScript({
  name: 'replyDiscard',
  keys: [...DEAD_REPLY_KEYS, ...LEGACY_DEAD_REPLY_KEYS],
  args: ['member', 'id'],
  decode: found,
});

/** The scripts of the reply outbox (its store loads them). */
export const OUTBOX_SCRIPTS = [
  replyTake,
  replyDone,
  replyPart,
  replyRetry,
  replyBury,
  replyRedrive,
  replyDiscard,
];
