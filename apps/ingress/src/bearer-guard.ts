import { sameSecret } from '@tributary/platforms';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { IngressError } from './errors.js';

/** What counts a client address's failed attempts: a limiter of `@fastify/rate-limit`. */
export type FailureBudget = ReturnType<FastifyInstance['createRateLimit']>;

/** An `onRequest` hook that refuses (401) a request without `Authorization: Bearer <token>`. */
export function bearerGuard(token: string, variable: string): (request: FastifyRequest) => Promise<void> {
  return async (request) => {
    if (sameSecret(request.headers.authorization ?? '', `Bearer ${token}`)) return;
    throw new IngressError('unauthorized', `this route needs \`Authorization: Bearer <${variable}>\``);
  };
}
