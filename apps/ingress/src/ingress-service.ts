import {
  type IngressConfig,
  RouteFile,
  RouteTable,
  sharedQueueOptions,
  type TrustProxy,
} from '@tributary/config';
import { ConditionLog, type Metrics, metricsContentType, observeFleet } from '@tributary/observability';
import type { PlatformClient, ThreadParent } from '@tributary/platforms';
import { Store, type ThreadQueue } from '@tributary/queue';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { AcceptedReactions } from './accepted-reactions.js';
import { buildAdminApp } from './admin/admin-listener.js';
import { buildApp } from './app.js';
import { Intake } from './intake.js';
import { PoolWatch } from './pool-watch.js';
import { prometheusObserver } from './prometheus-observer.js';
import { RouteTablePublisher } from './route-table-publisher.js';
import { SenderNames } from './sender-names.js';
import { ThreadParents } from './thread-parents.js';
import { ThreadRouting } from './thread-routing.js';
import type { WebhookDefinition } from './webhook-definitions.js';

/** Fastify's types lack the hop count its trustProxy takes; this is the same rule as a function. */
function trustedProxies(trust: TrustProxy) {
  return typeof trust === 'number' ? (_address: string, hop: number) => hop < trust : trust;
}

export interface IngressOptions {
  logger: Logger;
  webhooks: readonly WebhookDefinition[];
  clients: ReadonlyMap<string, PlatformClient>;
  metrics: Metrics;
}

export interface RunningIngress {
  readonly app: FastifyInstance;
  /** The webhooks and health. */
  readonly url: string;
  /** The admin listener: `/metrics`, the admin API, the operator console. */
  readonly adminUrl: string;
  readonly queue: ThreadQueue;
  /** Drains requests in flight (new ones get 503), then closes Redis. */
  close(): Promise<void>;
}

/** How often, during an outage, ingress asks Redis whether it answers again. */
const OUTAGE_PROBE_MS = 1_000;

const OUTAGE_LINES = {
  started: 'redis outage started: requests get 503 until Redis answers',
  ongoing: 'redis outage goes on: requests get 503 until Redis answers',
  ended: 'redis outage ended: Redis answers again',
};

/**
 * A Redis outage told as one condition whatever fails (a refused request, a lost connection): a warning
 * when it starts, one line when Redis answers again with how long it lasted and how many requests were
 * refused. It sets the outage metrics, with a probe: while Redis is down, ingress asks it every second,
 * so the end of an outage is seen (and logged once) even when no request arrives and the connection
 * never dropped (a frozen Redis times out without a reconnect).
 */
function watchOutages(
  store: Store,
  logger: Logger,
  metrics: Metrics,
): { outage: ConditionLog; stop(): void } {
  let probe: NodeJS.Timeout | undefined;
  const outage = new ConditionLog(logger, OUTAGE_LINES, {
    conditionOf: () => 'redis',
    tally: 'refusedRequests',
    onStarted() {
      metrics.ingressRedisOutagesTotal.inc();
      metrics.ingressRedisDown.set(1);
      probe = setInterval(() => {
        store.ready().then(
          () => outage.cleared(),
          () => {},
        );
      }, OUTAGE_PROBE_MS);
      probe.unref();
    },
    onEnded() {
      metrics.ingressRedisDown.set(0);
      clearInterval(probe);
    },
  });
  return { outage, stop: () => clearInterval(probe) };
}

/** Starts ingress on the configured port (0: any free port). Redis may be down: routes answer 503. */
export async function startIngress(
  config: Readonly<IngressConfig>,
  options: IngressOptions,
): Promise<RunningIngress> {
  const { logger } = options;
  // Before Redis: a route file that cannot be used stops the start with its line, and nothing to undo.
  const routes = await openRoutes(config, options.metrics, logger.child({ component: 'routes' }));
  const store = Store.open({
    url: config.redisUrl,
    connection: { kind: 'fail-fast', timeoutMs: config.redisTimeoutMs },
    auditMaxEntries: config.auditMaxEntries,
    queue: {
      // With affinity, enqueue rings the worker that holds the thread's live session first (ADR 0007).
      ...sharedQueueOptions(config),
      maxBacklog: config.maxThreadBacklog,
      ackReplicas: config.ackReplicas,
      ackReplicasTimeoutMs: config.ackReplicasTimeoutMs,
    },
  });
  const { outage, stop: stopWatching } = watchOutages(
    store,
    logger.child({ component: 'redis' }),
    options.metrics,
  );
  // A Redis that is down at start-up is retried in the background; readiness reports it meanwhile.
  store.onConnectionError((error) => outage.report(error));
  store.onConnectionReady(() => outage.cleared());
  // Without an offline queue, commands sent while connecting fail; give a Redis that is up the moment
  // to connect, so start-up traffic (BullMQ's included) finds it ready. A Redis that is down stays 503.
  await store.whenReady(config.redisTimeoutMs * 2);
  const { queue } = store;
  observeFleet(options.metrics, () => store.fleetStats());
  const reactions = new AcceptedReactions(options.clients, logger.child({ component: 'reactions' }));
  const parents = new ThreadParents(
    store.parents<ThreadParent>(),
    options.clients,
    logger.child({ component: 'thread-parents' }),
  );
  const routing = new ThreadRouting(
    store.routes,
    () => routes?.current ?? RouteTable.EMPTY,
    logger.child({ component: 'routes' }),
  );
  const published = new RouteTablePublisher(
    store.usage,
    store.turnLimits,
    store.routeLines,
    () => routes?.current ?? RouteTable.EMPTY,
    logger.child({ component: 'routes' }),
  );
  published.start(config.routesReloadMs);
  const intake = new Intake({
    queue: queue.intake,
    controls: store.controls,
    recent: store.recent,
    approvals: store.approvals,
    approvers: new Set(config.approvers),
    routing,
    audit: store.audit,
    status: {
      state: (thread) => store.admin.state(thread),
      session: (thread) => store.sessions.get(thread),
      lastBatch: async (thread) => (await store.history.of(thread, 1))[0],
      route: async (thread) => (await routing.recorded(thread))?.route,
    },
    gates: config.gates,
    gateState: store.gates,
    clients: options.clients,
    reactions,
    parents,
    names: new SenderNames(options.clients, logger.child({ component: 'sender-names' })),
    pools: new PoolWatch({
      workers: store.workers,
      routes: store.routes,
      clients: options.clients,
      onUnserved: (pool) => options.metrics.poolUnservedMessagesTotal.inc({ pool }),
      onFailure: (what) => options.metrics.poolWatchFailuresTotal.inc({ what }),
      logger: logger.child({ component: 'pools' }),
    }),
    logger,
  });
  const app = await buildApp({
    store,
    intake,
    webhooks: options.webhooks,
    observer: prometheusObserver(options.metrics),
    logger,
    bodyLimitBytes: config.bodyLimitBytes,
    rateLimitPerMinute: config.rateLimitPerMinute,
    conversationLimit: (place) => routes?.current.messagesPerMinute(place),
    trustProxy: trustedProxies(config.trustProxy),
    redisRefused: (error) => outage.tally(error),
  });
  const admin = await buildAdminApp({
    store,
    metrics: { contentType: metricsContentType, metrics: () => options.metrics.registry.metrics() },
    logger: logger.child({ component: 'admin' }),
    tokens: config.adminTokens,
    ...(config.metricsToken ? { metricsToken: config.metricsToken } : {}),
    trustProxy: trustedProxies(config.trustProxy),
  });
  const adminUrl = await admin.listen({ port: config.adminPort, host: config.adminHost });
  const url = await app.listen({ port: config.port, host: config.host });
  logger.info(
    {
      url,
      adminUrl,
      adminApi: config.adminTokens.length > 0,
      platforms: options.webhooks.filter((w) => w.adapter).map((w) => w.path),
    },
    'ingress listening',
  );
  return {
    app,
    url,
    adminUrl,
    queue,
    async close() {
      // Fastify stops accepting connections, answers 503 to requests arriving meanwhile, and waits
      // for those in flight.
      await app.close();
      await admin.close();
      routes?.close();
      published.stop();
      stopWatching();
      await reactions.settle();
      await store.close();
      logger.info('ingress stopped');
    },
  };
}

/**
 * The route file, when ROUTES_FILE names one: read now (a file it cannot use fails the start, naming
 * the line) and again every ROUTES_RELOAD_MS; each change is said and counted (docs/adr/0058).
 */
async function openRoutes(
  config: Readonly<IngressConfig>,
  metrics: Metrics,
  logger: Logger,
): Promise<RouteFile | undefined> {
  if (config.routesFile === undefined) return undefined;
  const file = await RouteFile.open({
    path: config.routesFile,
    reloadMs: config.routesReloadMs,
    onReload: (table) => {
      metrics.routeTableReloadsTotal.inc({ result: 'applied' });
      logger.info({ routes: table.names }, 'route table changed; new threads take it');
    },
    onInvalid: (error) => {
      metrics.routeTableReloadsTotal.inc({ result: 'refused' });
      logger.warn({ err: error }, 'route file changed but cannot be used; the table in force stays');
    },
  });
  logger.info({ file: config.routesFile, routes: file.current.names }, 'route table read');
  return file;
}
