import type { Reply } from './scripts.js';
import { ScriptStatus } from './status.js';

/** The reply decodings several scripts share. */

export type Rung = { status: 'ring'; epoch: number };

export function ok(reply: Reply): Reply {
  if (reply.status !== ScriptStatus.Ok) throw reply.unexpected();
  return reply;
}

/** `{RING, epoch}` or `{OK}`: rung again, or nothing to do. */
export function ringOrOk(reply: Reply): Rung | { status: 'ok' } {
  if (reply.status === ScriptStatus.Ring) return { status: 'ring', epoch: reply.num(1) };
  if (reply.status === ScriptStatus.Ok) return { status: 'ok' };
  throw reply.unexpected();
}

/** `{NOT_FOUND}` for a thread Redis knows nothing of, else the script's own decoding. */
export function known<Result>(decode: (reply: Reply) => Result) {
  return (reply: Reply): Result | 'notFound' =>
    reply.status === ScriptStatus.NotFound ? 'notFound' : decode(reply);
}

/** `{OK}` or `{FENCED}`: whether the caller still held the outbox lock. */
export function okOrFenced(reply: Reply): 'ok' | 'fenced' {
  if (reply.status === ScriptStatus.Fenced) return 'fenced';
  ok(reply);
  return 'ok';
}

/** `{OK}` or `{NOT_FOUND}`: whether what the script looked for was there. */
export function found(reply: Reply): boolean {
  if (reply.status === ScriptStatus.NotFound) return false;
  ok(reply);
  return true;
}
