import { isRedisUnavailable, type Store } from '@tributary/queue';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyServerOptions,
  LogController,
} from 'fastify';
import type { Logger } from 'pino';
import { answerClientError, sendError } from './error-handler.js';
import { IngressError } from './errors.js';
import type { IngressObserver } from './ingress-observer.js';
import type { Intake } from './intake.js';
import type { WebhookDefinition } from './webhook-definitions.js';
import type { ConversationLimit } from './webhook-limits.js';
import { webhookRoute } from './webhook-route.js';

export interface IngressAppDeps {
  store: Pick<Store, 'ready'>;
  intake: Intake;
  webhooks: readonly WebhookDefinition[];
  observer: IngressObserver;
  logger: Logger;
  bodyLimitBytes: number;
  rateLimitPerMinute: number;
  /** A conversation's own budget a minute, where its route sets one (`messagesPerMinute`). */
  conversationLimit?: ConversationLimit;
  /** TRUST_PROXY: whose X-Forwarded-For gives the client address; off when undefined. */
  trustProxy?: FastifyServerOptions['trustProxy'];
  /** Told of every request refused because Redis did not answer (the outage log counts them). */
  redisRefused(error: Error): void;
}

/**
 * Builds the webhook app without listening or touching process state, so tests start it on port 0. It
 * serves the webhooks and health only: `/metrics`, the admin API and the console are on the admin
 * listener (admin/admin-listener.ts), which the public port never reaches.
 */
export async function buildApp(deps: IngressAppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    // One line per request would drown the dispatch lines; refusals and failures are logged on their own.
    logController: new LogController({ disableRequestLogging: true }),
    // Without request logging a request writes at most its refusal's line, so it gets the app's logger
    // rather than a child of its own (pino builds one, bindings and redaction, for every request).
    childLoggerFactory: (logger) => logger,
    bodyLimit: deps.bodyLimitBytes,
    // Platforms send their own ids; ours only tie log lines together.
    requestIdHeader: false,
    trustProxy: deps.trustProxy ?? false,
    // Fastify's own refusals (bad URL encoding, an over-long path parameter) and Node's (malformed
    // HTTP, oversized headers) answer in the catalogue's format like every other error.
    frameworkErrors: (error, request, reply) => {
      sendError(error, request, reply);
    },
    clientErrorHandler: (error, socket) => answerClientError(error, socket, deps.logger as FastifyBaseLogger),
  });
  app.setErrorHandler((error, request, reply) => {
    sendError(error, request, reply);
  });
  // Registered before the routes, so every route's context inherits it, whatever its error handler.
  app.addHook('onError', async (_request, _reply, error) => {
    if (isRedisUnavailable(error)) deps.redisRefused(error);
  });
  app.setNotFoundHandler((request, reply) => {
    sendError(new IngressError('not_found', `no route ${request.method} ${request.url}`), request, reply);
  });

  app.get('/livez', async () => ({ ok: true }));
  app.get('/readyz', async () => {
    await deps.store.ready();
    return { ok: true };
  });
  for (const webhook of deps.webhooks) {
    await app.register(webhookRoute, {
      ...webhook,
      intake: deps.intake,
      observer: deps.observer,
      bodyLimitBytes: deps.bodyLimitBytes,
      rateLimitPerMinute: deps.rateLimitPerMinute,
      ...(deps.conversationLimit ? { conversationLimit: deps.conversationLimit } : {}),
    });
  }
  return app;
}
