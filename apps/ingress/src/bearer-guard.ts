import { sameSecret } from '@tributary/platforms';
import type { FastifyRequest } from 'fastify';
import { IngressError } from './errors.js';

/** An `onRequest` hook that refuses (401) a request without `Authorization: Bearer <token>`. */
export function bearerGuard(token: string, variable: string): (request: FastifyRequest) => Promise<void> {
  return async (request) => {
    if (!sameSecret(request.headers.authorization ?? '', `Bearer ${token}`)) {
      throw new IngressError('unauthorized', `this route needs \`Authorization: Bearer <${variable}>\``);
    }
  };
}
