import { sameSecret } from '@tributary/platforms';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { IngressError } from './errors.js';

/** What counts a client address's failed attempts: a limiter of `@fastify/rate-limit`. */
export type FailureBudget = ReturnType<FastifyInstance['createRateLimit']>;

/**
 * An `onRequest` hook that refuses (401) a request without `Authorization: Bearer <token>`. With a
 * `failures` budget, each refusal spends the client address's, and past it the answer is 429 with
 * Retry-After: a token cannot be guessed at the speed of the network.
 */
export function bearerGuard(
  token: string,
  variable: string,
  failures?: FailureBudget,
): (request: FastifyRequest) => Promise<void> {
  return async (request) => {
    if (sameSecret(request.headers.authorization ?? '', `Bearer ${token}`)) return;
    const limit = await failures?.(request);
    if (limit && !limit.isAllowed && limit.isExceeded) {
      const retryAfter = Math.max(1, limit.ttlInSeconds);
      throw new IngressError(
        'rate_limited',
        `more than ${limit.max} requests with a wrong ${variable} from this address a minute`,
        retryAfter,
      );
    }
    throw new IngressError('unauthorized', `this route needs \`Authorization: Bearer <${variable}>\``);
  };
}
