import { isRouteName } from '@tributary/config';
import { USAGE_DAYS_KEPT } from '@tributary/queue';
import type { FastifyInstance } from 'fastify';
import { IngressError } from '../errors.js';
import { auditedAction } from './audited-action.js';
import type { AdminStore } from './list-routes.js';

const routeParams = {
  type: 'object',
  required: ['route'],
  properties: { route: { type: 'string', minLength: 1, maxLength: 40 } },
} as const;

function routeOf(route: string): string {
  if (!isRouteName(route)) {
    throw new IngressError('invalid_body', `"${route}" cannot name a route: 1-40 of a-z, 0-9 and -`);
  }
  return route;
}

/**
 * Token usage per route and day, and the routes' daily budgets (docs/adr/0059): read by anyone with a
 * token; an operator's budget for a route (over the route table's) set or cleared by one who may act,
 * in force for the route's next turn, without a restart.
 */
export async function usageRoutes(app: FastifyInstance, store: AdminStore): Promise<void> {
  const { usage, audit } = store;

  app.get<{ Querystring: { days: number } }>(
    '/admin/usage',
    {
      schema: {
        querystring: {
          type: 'object',
          properties: { days: { type: 'integer', minimum: 1, maximum: USAGE_DAYS_KEPT, default: 7 } },
          additionalProperties: false,
        },
      },
    },
    async (request) => {
      const [days, budgets] = await Promise.all([usage.days(request.query.days), usage.budgets()]);
      return { items: days, budgets };
    },
  );

  app.put<{ Params: { route: string }; Body: { dailyTokens: number } }>(
    '/admin/budgets/:route',
    {
      schema: {
        params: routeParams,
        body: {
          type: 'object',
          required: ['dailyTokens'],
          properties: { dailyTokens: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER } },
          additionalProperties: false,
        },
      },
    },
    async (request, reply) => {
      const route = routeOf(request.params.route);
      const { dailyTokens } = request.body;
      const description = { action: 'budgets.set', target: { route, dailyTokens } };
      return auditedAction(audit, request, reply, description, async () => {
        await usage.override(route, dailyTokens);
        return { body: { ok: true, route, result: `${route} may spend ${dailyTokens} tokens a day` } };
      });
    },
  );

  app.delete<{ Params: { route: string } }>(
    '/admin/budgets/:route',
    { schema: { params: routeParams } },
    async (request, reply) => {
      const route = routeOf(request.params.route);
      return auditedAction(
        audit,
        request,
        reply,
        { action: 'budgets.clear', target: { route } },
        async () => {
          await usage.override(route, undefined);
          return { body: { ok: true, route, result: `${route} keeps the route table's budget, if any` } };
        },
      );
    },
  );
}
