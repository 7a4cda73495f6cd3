import fastifyStatic from '@fastify/static';
import type { AdminToken } from '@tributary/config';
import { CONSOLE_CSP, CONSOLE_ROOT } from '@tributary/console';
import { failedAuthBudget } from '@tributary/platforms';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyServerOptions,
  LogController,
} from 'fastify';
import type { Logger } from 'pino';
import { bearerGuard } from '../bearer-guard.js';
import { answerClientError, sendError } from '../error-handler.js';
import { IngressError } from '../errors.js';
import { actionRoutes } from './action-routes.js';
import { AdminAuth } from './admin-auth.js';
import { type AdminStore, listRoutes } from './list-routes.js';
import { usageRoutes } from './usage-routes.js';

export interface MetricsSource {
  contentType: string;
  metrics(): Promise<string>;
}

export interface AdminListenerDeps {
  store: AdminStore;
  metrics: MetricsSource;
  logger: Logger;
  /** Empty: no admin API (its routes answer 404 saying how to turn it on). */
  tokens: readonly AdminToken[];
  /** Bearer token `/metrics` requires; open when undefined. */
  metricsToken?: string;
  /** TRUST_PROXY: whose X-Forwarded-For gives the client address; off when undefined. */
  trustProxy?: FastifyServerOptions['trustProxy'];
}

/** Headers every answer of the admin listener carries: the console's CSP, no sniffing, no framing. */
const SECURITY_HEADERS = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  // Admin answers hold thread contents: no cache keeps them.
  'cache-control': 'no-store',
};

/**
 * The admin listener (its own port and address, apart from the webhooks): `/metrics`, the admin API
 * under `/admin` and the operator console at `/`. Built without listening, so tests start it on port 0.
 */
export async function buildAdminApp(deps: AdminListenerDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    trustProxy: deps.trustProxy ?? false,
    frameworkErrors: (error, request, reply) => {
      sendError(error, request, reply);
    },
    clientErrorHandler: (error, socket) => answerClientError(error, socket, deps.logger as FastifyBaseLogger),
  });
  app.setErrorHandler((error, request, reply) => {
    sendError(error, request, reply);
  });
  app.setNotFoundHandler((request, reply) => {
    sendError(new IngressError('not_found', `no route ${request.method} ${request.url}`), request, reply);
  });
  app.addHook('onSend', async (_request, reply) => {
    reply.headers(SECURITY_HEADERS);
  });

  // One budget of wrong tokens per client address (request.ip, which TRUST_PROXY makes the real one)
  // for `/metrics` and the admin API alike: a guesser gains nothing by trying both.
  const failures = await failedAuthBudget(app);
  app.get(
    '/metrics',
    deps.metricsToken ? { onRequest: bearerGuard(deps.metricsToken, 'METRICS_TOKEN', failures) } : {},
    async (_request, reply) =>
      reply.header('content-type', deps.metrics.contentType).send(await deps.metrics.metrics()),
  );
  await app.register(fastifyStatic, { root: CONSOLE_ROOT, index: 'index.html', wildcard: false });

  await app.register(async (admin) => {
    if (deps.tokens.length === 0) {
      admin.all('/admin/*', async () => {
        throw new IngressError('not_found', 'the admin API is off: set ADMIN_TOKENS (or ADMIN_TOKEN)');
      });
      return;
    }
    admin.addHook('onRequest', new AdminAuth(deps.tokens).guard(failures));
    await listRoutes(admin, deps.store);
    await actionRoutes(admin, deps.store);
    await usageRoutes(admin, deps.store);
  });
  return app;
}
