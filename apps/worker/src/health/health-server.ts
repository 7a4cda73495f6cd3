import type { Metrics } from '@tributary/observability';
import { metricsContentType } from '@tributary/observability';
import { failedAuthBudget, sameSecret } from '@tributary/platforms';
import Fastify, { type FastifyInstance, LogController } from 'fastify';

export interface HealthChecks {
  /**
   * Why the worker takes no more turns (shutting down, drained by an operator): the orchestrator stops
   * routing to and counting on it. Undefined while it takes them.
   */
  notAccepting(): string | undefined;
  /** Throws when Redis does not answer. */
  redis(): Promise<void>;
  /** Whether this worker still consumes doorbells (the queue's ConsumerWatch). */
  consuming(): boolean;
  /** Why the agent cannot be used (it failed to start too often in a row); undefined when it can. */
  agentProblem(): string | undefined;
}

export interface HealthServerOptions {
  port: number;
  host: string;
  /**
   * METRICS_TOKEN: `/metrics` answers 401 without `Authorization: Bearer <token>`, and 429 once the
   * client address has sent too many wrong ones this minute.
   */
  metricsToken: string | undefined;
}

/** `/livez`, `/readyz` and `/metrics` of a worker, on METRICS_PORT. */
export async function startHealthServer(
  { port, host, metricsToken }: HealthServerOptions,
  metrics: Metrics,
  checks: HealthChecks,
): Promise<FastifyInstance> {
  const app = Fastify({ logController: new LogController({ disableRequestLogging: true }) });
  app.get('/livez', async () => ({ ok: true }));
  app.get('/readyz', async (_request, reply) => {
    const problems: string[] = [];
    const stopped = checks.notAccepting();
    if (stopped) problems.push(stopped);
    await checks.redis().catch((error: Error) => problems.push(`redis: ${error.message}`));
    if (!checks.consuming()) problems.push('doorbells are waiting but this worker is not consuming them');
    const agent = checks.agentProblem();
    if (agent) problems.push(agent);
    return problems.length === 0
      ? { ok: true }
      : reply.code(503).send({ error: problems.join('; '), code: 'not_ready' });
  });
  const failures = await failedAuthBudget(app);
  app.get('/metrics', async (request, reply) => {
    if (metricsToken && !sameSecret(request.headers.authorization ?? '', `Bearer ${metricsToken}`)) {
      const over = await failures(request);
      if (over) {
        return reply
          .code(429)
          .header('retry-after', over.retryAfterSeconds)
          .send({
            error: `more than ${over.max} requests with a wrong METRICS_TOKEN from this address a minute`,
            code: 'rate_limited',
          });
      }
      return reply
        .code(401)
        .send({ error: '/metrics needs `Authorization: Bearer <METRICS_TOKEN>`', code: 'unauthorized' });
    }
    return reply.header('content-type', metricsContentType).send(await metrics.registry.metrics());
  });
  await app.listen({ port, host });
  return app;
}
