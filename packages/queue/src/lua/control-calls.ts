import { known, ok } from './decoders.js';
import { defineScript, type Reply } from './scripts.js';
import { ScriptStatus } from './status.js';

/**
 * The control commands' Lua scripts (control-*.lua), declared as queue-calls.ts declares the queue's.
 * Each applies its command at most once per delivery: the delivery's idempotency key goes into the
 * thread's dedup window in the script that acts, with the cancel it publishes.
 */

const CONTROL_ARGS = ['dedupMember', 'dedupTtlMs', 'controlChannel', 'thread'] as const;

/** `{DUPLICATE}`: a delivery applied before; else the script's own decoding. */
function once<Result>(decode: (reply: Reply) => Result) {
  return (reply: Reply): Result | 'duplicate' =>
    reply.status === ScriptStatus.Duplicate ? 'duplicate' : decode(reply);
}

export const controlCancel = defineScript({
  name: 'controlCancel',
  keys: ['state', 'dedup', 'dedupUntil'],
  args: CONTROL_ARGS,
  decode: once((reply) => ({ wasRunning: ok(reply).str(1) === 'running' })),
});

export const controlCancelAll = defineScript({
  name: 'controlCancelAll',
  keys: ['state', 'inbox', 'dedup', 'dedupUntil'],
  args: CONTROL_ARGS,
  decode: once((reply) => ({ dropped: ok(reply).num(1) })),
});

export const controlReset = defineScript({
  name: 'controlReset',
  keys: ['state', 'inbox', 'history', 'dedup', 'dedupUntil'],
  args: CONTROL_ARGS,
  decode: once(known((reply) => ({ dropped: ok(reply).num(1), generation: reply.num(2) }))),
});

export const CONTROL_SCRIPTS = [controlCancel, controlCancelAll, controlReset];
