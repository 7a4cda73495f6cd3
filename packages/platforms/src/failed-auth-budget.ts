import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/** Requests with a wrong token one client address may send a minute before it is answered 429. */
export const FAILED_AUTH_PER_MINUTE = 20;

/** An address past its budget: the budget, and how long until the address may try again. */
export interface OverBudget {
  max: number;
  retryAfterSeconds: number;
}

/** Spends one failed attempt of the request's client address; says so when that was one too many. */
export type FailedAuthBudget = (request: FastifyRequest) => Promise<OverBudget | undefined>;

/**
 * Counts the requests that failed authentication on `app`, per client address (`request.ip`, which
 * the app's trustProxy makes the real client's), so a bearer token cannot be guessed at the speed of
 * the network. Only failures are counted: the right token is never refused, so a guesser cannot lock
 * out the client that holds it.
 */
export async function failedAuthBudget(app: FastifyInstance): Promise<FailedAuthBudget> {
  await app.register(rateLimit, { global: false });
  const failures = app.createRateLimit({ max: FAILED_AUTH_PER_MINUTE, timeWindow: 60_000 });
  return async (request) => {
    const limit = await failures(request);
    if (limit.isAllowed || !limit.isExceeded) return undefined;
    return { max: limit.max, retryAfterSeconds: Math.max(1, limit.ttlInSeconds) };
  };
}
