import { createHash, timingSafeEqual } from 'node:crypto';
import type { AdminRole, AdminToken } from '@tributary/config';
import type { FailedAuthBudget } from '@tributary/platforms';
import type { FastifyRequest } from 'fastify';
import { refuseWrongToken } from '../bearer-guard.js';
import { IngressError } from '../errors.js';

/** Who is asking: the token's name (the audit log's "who") and what it may do. */
export interface Operator {
  name: string;
  role: AdminRole;
}

declare module 'fastify' {
  interface FastifyRequest {
    operator?: Operator;
  }
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * The admin tokens, compared in constant time: the presented token's digest against every token's, each
 * comparison of equal length and all of them made whichever matches, so neither a token's length nor
 * which one matched shows in the time taken.
 */
export class AdminAuth {
  private readonly tokens: { operator: Operator; digest: Buffer }[];

  constructor(tokens: readonly AdminToken[]) {
    this.tokens = tokens.map(({ name, role, token }) => ({
      operator: { name, role },
      digest: digest(token),
    }));
  }

  identify(authorization: string | undefined): Operator | undefined {
    const presented = digest(/^Bearer (.+)$/.exec(authorization ?? '')?.[1] ?? '');
    let found: Operator | undefined;
    for (const { operator, digest: expected } of this.tokens) {
      if (timingSafeEqual(presented, expected)) found = operator;
    }
    return found;
  }

  /**
   * An `onRequest` hook: 401 without a known token; reads need any role, everything else `act`. Each
   * refusal spends the client address's `failures` budget; past it the answer is 429 with Retry-After,
   * so a token cannot be guessed at the speed of the network.
   */
  guard(failures: FailedAuthBudget): (request: FastifyRequest) => Promise<void> {
    return async (request) => {
      const operator = this.identify(request.headers.authorization);
      if (!operator) return refuseWrongToken(failures, request, 'admin token');
      const reads = request.method === 'GET' || request.method === 'HEAD';
      if (!reads && operator.role !== 'act') {
        throw new IngressError('forbidden', `the token ${operator.name} may only read`);
      }
      request.operator = operator;
    };
  }
}
