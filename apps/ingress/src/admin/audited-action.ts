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

/** What one admin action is, for the audit log: its name and what it acts on. */
export interface ActionDescription {
  action: string;
  target: unknown;
}

/**
 * Runs an admin action once per Idempotency-Key (a retry with the same key gets the first answer,
 * marked `idempotent-replayed: true`, and does nothing again) and records it in the audit log, its
 * outcome or its error included, and in the log at info: who (the token's name), what, on what, how.
 */
export async function auditedAction(
  audit: AuditLog,
  request: FastifyRequest,
  reply: FastifyReply,
  description: ActionDescription,
  run: () => Promise<ActionAnswer>,
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
  let answer: StoredAnswer & { body: Record<string, unknown> };
  try {
    const done = await run();
    answer = { status: done.status ?? 200, body: done.body };
  } catch (error) {
    if (!(error instanceof IngressError) || error.status >= 500) {
      if (digest) await audit.release(digest);
      throw error;
    }
    // A refusal (unknown thread, no such dead letter) is an outcome too: recorded, and replayed.
    answer = { status: ERROR_CATALOG[error.code].status, body: { ...errorBody(error.code, error.message) } };
  }
  const outcome = answer.status < 400 ? (answer.body.result ?? 'done') : { error: answer.body.error };
  const entry = await audit.append({ actor, ...description, result: outcome });
  request.log.info({ audit: entry.id, actor, ...description, status: answer.status }, 'admin action');
  if (digest) await audit.answer(digest, answer, IDEMPOTENCY_TTL_MS);
  return reply.code(answer.status).send(answer.body);
}
