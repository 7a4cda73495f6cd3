import { type FailedAuthBudget, sameSecret } from '@tributary/platforms';
import type { FastifyRequest } from 'fastify';
import { IngressError } from './errors.js';

/**
 * Refuses a request whose bearer token is wrong or missing: 401, or 429 with Retry-After once its
 * client address has spent its budget of `failures`.
 */
export async function refuseWrongToken(
  failures: FailedAuthBudget,
  request: FastifyRequest,
  token: string,
): Promise<never> {
  const over = await failures(request);
  if (over) {
    throw new IngressError(
      'rate_limited',
      `more than ${over.max} requests with a wrong ${token} from this address a minute`,
      over.retryAfterSeconds,
    );
  }
  throw new IngressError('unauthorized', `this route needs \`Authorization: Bearer <${token}>\``);
}

/** An `onRequest` hook that refuses a request without `Authorization: Bearer <token>` (refuseWrongToken). */
export function bearerGuard(
  token: string,
  variable: string,
  failures: FailedAuthBudget,
): (request: FastifyRequest) => Promise<void> {
  return async (request) => {
    if (sameSecret(request.headers.authorization ?? '', `Bearer ${token}`)) return;
    await refuseWrongToken(failures, request, variable);
  };
}
