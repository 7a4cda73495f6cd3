import Fastify, { type FastifyInstance, LogController } from 'fastify';

/**
 * `/livez` (the process serves) and `/readyz` (its Gateway session is up) for the orchestrator's
 * probes, on METRICS_PORT as the worker's are. A session the library is reconnecting reads not ready;
 * one lost for good ends the process.
 */
export async function startHealthServer(
  port: number,
  host: string,
  connected: () => boolean,
): Promise<FastifyInstance> {
  const app = Fastify({ logController: new LogController({ disableRequestLogging: true }) });
  app.get('/livez', async () => ({ ok: true }));
  app.get('/readyz', async (_request, reply) =>
    connected()
      ? { ok: true }
      : reply.code(503).send({ error: 'the Discord Gateway session is not up', code: 'not_ready' }),
  );
  await app.listen({ port, host });
  return app;
}
