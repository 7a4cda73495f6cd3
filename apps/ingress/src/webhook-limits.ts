import type { RoutePlace } from '@tributary/config';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { IngressError } from './errors.js';

const MINUTE_MS = 60_000;

/**
 * The two budgets of one webhook route (docs/adr/0013). Verification runs first and decides which one
 * a request spends, so requests that fail it never touch the budget of those that pass.
 */
export interface WebhookLimits {
  /**
   * Refuses a request that failed verification: 401, or 429 once its client address has failed more
   * than the budget this minute.
   */
  refuseUnverified(request: FastifyRequest, reason: string): Promise<never>;
  /**
   * A verified message or command spends its conversation's budget (its route's `messagesPerMinute`
   * where the route table sets one); 429 once that is spent.
   */
  admitVerified(request: FastifyRequest, place: RoutePlace): Promise<void>;
}

/** A conversation's own budget a minute, where its route sets one (the route table in force). */
export type ConversationLimit = (place: RoutePlace) => number | undefined;

type Limiter = ReturnType<FastifyInstance['createRateLimit']>;

/** Needs `@fastify/rate-limit` registered on `app`; each limiter keeps its own counters. */
export function webhookLimits(
  app: FastifyInstance,
  perMinute: number,
  conversationLimit: ConversationLimit = () => undefined,
): WebhookLimits {
  const conversations = new WeakMap<FastifyRequest, { key: string; max: number }>();
  // The default key is the client address (request.ip, which TRUST_PROXY makes the real one).
  const byAddress = app.createRateLimit({ max: perMinute, timeWindow: MINUTE_MS });
  const byConversation = app.createRateLimit({
    max: (request) => conversations.get(request)?.max ?? perMinute,
    timeWindow: MINUTE_MS,
    keyGenerator: (request) => conversations.get(request)?.key ?? '',
  });
  const spend = async (limiter: Limiter, request: FastifyRequest, what: string) => {
    const limit = await limiter(request);
    if (!limit.isAllowed && limit.isExceeded) {
      const retryAfter = Math.max(1, limit.ttlInSeconds);
      throw new IngressError('rate_limited', `more than ${limit.max} ${what} a minute`, retryAfter);
    }
  };
  return {
    async refuseUnverified(request, reason) {
      await spend(byAddress, request, 'requests that failed verification from this address');
      throw new IngressError('unauthorized', reason);
    },
    async admitVerified(request, place) {
      const key = `${place.platform}:${place.channelId}`;
      conversations.set(request, { key, max: conversationLimit(place) ?? perMinute });
      await spend(byConversation, request, 'messages in this conversation');
    },
  };
}
