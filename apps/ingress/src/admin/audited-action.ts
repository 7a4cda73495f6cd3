import { createHash } from 'node:crypto';
import type { AuditLog, StoredAnswer } from '@tributary/queue';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_CATALOG, errorBody, IngressError } from '../errors.js';

/** How long an action's answer is kept for a retry with the same Idempotency-Key. */
const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** How long a key is held while its action runs; a crash mid-action frees it after this. */
const IDEMPOTENCY_CLAIM_MS = 5 * 60 * 1000;

/** An action's answer: its status (200 unless said) and body. */
export interface ActionAnswer {
  status?: number;
  body: Record<string, unknown>;
}

/** What one admin action is, for the audit log: its name, what it acts on and, in bulk, its items. */
export interface ActionDescription {
  action: string;
  target: unknown;
  items?: unknown[];
}

/** An action that stopped at `error` after doing part of its work (`result`: how much), for the log. */
export class StoppedAction extends Error {
  override readonly name = 'StoppedAction';

  constructor(
    readonly error: unknown,
    readonly result: Record<string, unknown>,
    /** Whether anything was done before it stopped: the action is then partial, not failed. */
    readonly didSome: boolean,
  ) {
    super(messageOf(error));
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Runs an admin action once per Idempotency-Key (a retry with the same key gets the first answer,
 * marked `idempotent-replayed: true`, and does nothing again) and records it in the audit log: who (the
 * token's name), from where (the client's address), what, on what, written before it is done, then how
 * it ended: ok, failed with its error (a refusal too), or partial with its counts. An action whose
 * process dies midway stays `pending` there. The log says it too, at info (at warn when it failed).
 * `run` gets the key as a delivery identity (undefined without one), for an action that can also
 * refuse a repeat where it acts: a thread's control command remembers it in the thread's dedup window,
 * so even a retry whose first answer was never kept (the ingress died after acting, and the claim
 * lapsed) is not applied twice.
 */
export async function auditedAction(
  audit: AuditLog,
  request: FastifyRequest,
  reply: FastifyReply,
  description: ActionDescription,
  run: (delivery: string | undefined) => Promise<ActionAnswer>,
): Promise<unknown> {
  const actor = request.operator?.name ?? 'unknown';
  const key = request.headers['idempotency-key'];
  const digest =
    typeof key === 'string' && key !== ''
      ? createHash('sha256').update(`${actor}\n${key}`).digest('hex')
      : undefined;
  if (digest) {
    const claim = await audit.claim(digest, IDEMPOTENCY_CLAIM_MS);
    if (claim.kind === 'pending')
      throw new IngressError('conflict', 'an action with this Idempotency-Key is running');
    if (claim.kind === 'answered') {
      return reply.code(claim.answer.status).header('idempotent-replayed', 'true').send(claim.answer.body);
    }
  }
  const address = request.ip ?? null;
  const id = await audit.begin({ actor, address, ...description });
  const said = { audit: id, actor, address, action: description.action, target: description.target };
  let answer: StoredAnswer & { body: Record<string, unknown> };
  try {
    const done = await run(digest && `admin:${digest}`);
    answer = { status: done.status ?? 200, body: done.body };
  } catch (thrown) {
    const stopped = thrown instanceof StoppedAction ? thrown : undefined;
    const error = stopped?.error ?? thrown;
    if (!(error instanceof IngressError) || error.status >= 500) {
      const outcome = stopped?.didSome ? 'partial' : 'failed';
      // When Redis is what failed this fails too, and the entry stays pending: said in the log.
      await audit
        .complete(id, { outcome, result: { ...stopped?.result, error: messageOf(error) } })
        .catch((err: unknown) => request.log.warn({ ...said, err }, 'audit entry left pending'));
      request.log.warn({ ...said, outcome, err: error }, 'admin action failed');
      if (digest) await audit.release(digest);
      throw error;
    }
    // A refusal (unknown thread, no such dead letter) is an outcome too: recorded, and replayed.
    answer = { status: ERROR_CATALOG[error.code].status, body: { ...errorBody(error.code, error.message) } };
  }
  const refused = answer.status >= 400;
  const result = refused ? { error: answer.body.error } : (answer.body.result ?? 'done');
  await audit.complete(id, { outcome: refused ? 'failed' : 'ok', result });
  request.log.info({ ...said, status: answer.status }, 'admin action');
  if (digest) await audit.answer(digest, answer, IDEMPOTENCY_TTL_MS);
  return reply.code(answer.status).send(answer.body);
}
