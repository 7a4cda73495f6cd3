import type { NodeEntryCommand, SessionPool } from '@tributary/acp';
import { sharedQueueOptions, type WorkerConfig } from '@tributary/config';
import { createMetrics, type Metrics, platformCallHooks } from '@tributary/observability';
import { createPlatformClients, type PlatformClient } from '@tributary/platforms';
import {
  type ConsumerTiming,
  type DeliveryTuning,
  newOwnerId,
  type QueueConfig,
  Store,
  type ThreadControls,
  type ThreadQueue,
  type TurnHandler,
} from '@tributary/queue';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { type AgentIsolation, agentIsolation } from './agents/agent-isolation.js';
import { startAgentPool, type WorkerAgents } from './agents/agent-pool-start.js';
import { AgentStartHealth } from './agents/agent-start-health.js';
import { ThreadApprovals } from './approvals/thread-approvals.js';
import { startHealthServer } from './health/health-server.js';
import { observeWorker, type WorkerProbes } from './health/worker-gauges.js';
import { WorkerStatusReporter } from './health/worker-status.js';
import { LogReplySink } from './replies/log-reply-sink.js';
import type { OutboundSink } from './replies/outbox.js';
import { PlatformReplySink } from './replies/platform-reply-sink.js';
import { replySink } from './replies/reply-sink.js';
import { StartedSteps } from './started-steps.js';
import { RunningTurns, settleAbortedTurns } from './turns/running-turns.js';
import { SessionContinuity } from './turns/session-continuity.js';
import { threadBatching } from './turns/thread-batching.js';
import { ThreadProfiles } from './turns/thread-profiles.js';
import { keepThreads, type ThreadUpkeep } from './turns/thread-upkeep.js';
import type { TurnSignalListener } from './turns/turn-signals.js';
import { workerTurns } from './turns/worker-turns.js';
import type { AgentWarden } from './warden/agent-warden.js';
import { type GuardedWorker, startWarden } from './warden/warden-start.js';

export interface WorkerOptions {
  logger: Logger;
  /** The agent started when AGENT_COMMAND names none: the built-in one (`builtInAgentCommand`). */
  builtInAgent: NodeEntryCommand;
  /** Where delivered replies go on top of the platforms and the log. */
  sinks?: OutboundSink[];
  /** Replies, reactions and thread parents go through these; default: from the configured credentials. */
  clients?: ReadonlyMap<string, PlatformClient>;
  /** Default: a registry of its own, served on METRICS_PORT. */
  metrics?: Metrics;
  /** How the worker's doorbell consumers are watched (canaries, readiness); tests shorten it. */
  consumerTiming?: ConsumerTiming;
  /** Queue tuning not exposed as environment variables (tests shorten leases and retries). */
  queue?: Partial<QueueConfig>;
  /** Reply delivery tuning not exposed as environment variables (tests shorten the backoff). */
  delivery?: DeliveryTuning;
  /** Variables set in the agent's environment on top of the allowlist. */
  agentEnv?: Record<string, string>;
  onSignal?: TurnSignalListener;
}

export interface RunningWorker {
  readonly queue: ThreadQueue;
  /** `/cancel` and friends, as ingress applies them. */
  readonly controls: ThreadControls;
  readonly pool: SessionPool;
  readonly owner: string;
  /** Where `/livez`, `/readyz` and `/metrics` answer. */
  readonly healthUrl: string;
  /**
   * Settles when the worker can no longer keep its guarantees (its agent warden is gone, or revoked
   * it) and should be closed at once (`graceMs: 0`) and restarted.
   */
  readonly failed: Promise<Error>;
  /**
   * Turns not-ready, stops taking turns, lets running ones finish within `graceMs` (default
   * SHUTDOWN_GRACE_MS), hands the rest back, stops the agent process group. Bounded whatever Redis
   * does (see `shutdownDeadlineMs`).
   */
  close(options?: { graceMs?: number }): Promise<void>;
}

/**
 * How long a close may take before it is cut short: the turns' grace period, then the cancel and
 * hand-back of the rest (the pod's termination grace period covers both, infra/k8s/base/worker.yaml).
 */
export function shutdownDeadlineMs(
  config: Pick<WorkerConfig, 'shutdownGraceMs' | 'cancelTimeoutMs'>,
): number {
  return config.shutdownGraceMs + config.cancelTimeoutMs;
}

/**
 * `done` when `work` succeeds within `ms`; otherwise why not (it goes on in the background, its later
 * failure ignored).
 */
async function within(work: Promise<unknown>, ms: number): Promise<'done' | 'timed out' | { err: unknown }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timed out'>((resolve) => {
    timer = setTimeout(() => resolve('timed out'), ms);
  });
  try {
    return await Promise.race([
      work.then(
        () => 'done' as const,
        (err: unknown) => ({ err }),
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * How long an operator's drain waits for the turns it aborted to end (their agents killed, their
 * outcome settled) before it reports drained anyway and says which have not.
 */
const DRAIN_SETTLE_MS = 10_000;

export async function startWorker(
  config: Readonly<WorkerConfig>,
  options: WorkerOptions,
): Promise<RunningWorker> {
  const { logger } = options;
  const metrics = options.metrics ?? createMetrics(undefined, { logger });
  const store: Store = Store.open({
    url: config.redisUrl,
    connection: { kind: 'patient' },
    queue: {
      ...sharedQueueOptions(config),
      maxBatchMessages: config.maxBatchMessages,
      leaseMs: config.leaseMs,
      batching: threadBatching(config, () => store.routes, logger),
      maxBatchTokens: config.maxBatchTokens,
      ...options.queue,
    },
  });
  // A step that fails undoes the steps before it: a failed start leaves no agent, port or timer behind.
  const started = new StartedSteps(logger);
  started.undoWith(() => store.close());
  try {
    return await startOn(store, config, options, metrics, started);
  } catch (error) {
    await started.undo();
    throw error;
  }
}

/** The worker's start, step by step: each later step may use what the earlier ones set up. */
async function startOn(
  store: Store,
  config: Readonly<WorkerConfig>,
  options: WorkerOptions,
  metrics: Metrics,
  started: StartedSteps,
): Promise<RunningWorker> {
  const { logger } = options;
  // Before anything else: a worker that cannot isolate its agents does not start (docs/adr/0044).
  // An agent host starts this worker's agents only under its warden's lease, once the warden runs.
  let warden: AgentWarden | undefined;
  const isolation = await isolateAgents(config, () => warden?.hostTicket, logger);
  store.logConnectionErrors(logger.child({ component: 'redis' }));
  await store.checkSafety(config.redisSafety, logger);

  const owner = newOwnerId();
  const guard = await startWarden(config, store, owner, isolation.sandbox, metrics, logger);
  warden = guard.warden;
  started.undoWith(() => guard.warden.close());

  // What follows whether the agent starts pauses the runner, which needs the pool: it comes last.
  let starts: AgentStartHealth | undefined;
  // The people of a thread are asked through the platform clients, which come later: until they do,
  // no turn runs, so no request can come.
  let approvals: ThreadApprovals | undefined;
  const profiles = new ThreadProfiles(
    store.routes,
    { policy: config.permissionPolicy, byKind: config.permissionRules },
    logger.child({ component: 'routes' }),
  );
  const agents = await startAgentPool(
    config,
    options,
    isolation,
    guard.warden,
    metrics,
    { started: () => starts?.started(), failed: (failures) => starts?.failed(failures) },
    {
      ask: async (request, thread) => (approvals ? approvals.ask(request, thread) : { outcome: 'cancelled' }),
      permissionsFor: (thread) => profiles.permissions(thread),
      sessionModeOf: (thread) => profiles.sessionMode(thread),
      mcpServersOf: (thread) => profiles.mcpServers(thread),
    },
  );
  started.undoWith(() => agents.pool.close());

  const running = new RunningTurns();
  const continuity = sessionContinuity(store, agents, isolation.sandbox, logger);
  const upkeep = await keepThreads(store, owner, { agents, running, continuity }, metrics, logger);
  started.undoWith(() => upkeep.closeControls());
  started.undoWith(() => upkeep.stop());

  const pace = store.pace((platform, waitMs) =>
    metrics.platformPaceWaitSeconds.observe({ platform }, waitMs / 1000),
  );
  const clients =
    options.clients ??
    createPlatformClients(config.platforms, {
      ...platformCallHooks(metrics, logger),
      pace: (platform, limits, draft) => pace.take(platform, limits, draft),
    });
  approvals = new ThreadApprovals({
    approvals: store.approvals,
    clients,
    running,
    secrets: agents.secrets,
    metrics,
    logger: logger.child({ component: 'approvals' }),
    timeoutMs: config.approvalTimeoutMs,
    fallback: config.approvalFallback,
  });
  const status = new WorkerStatusReporter({
    registry: store.workers,
    owner,
    concurrency: config.concurrency,
    workerPool: config.workerPool,
    pool: agents.pool,
    running: () => running.threads(),
    logger: logger.child({ component: 'status' }),
  });
  const handler = workerTurns({
    ...{ config, store, agents, continuity, clients, running, profiles, metrics, logger },
    ...(options.onSignal ? { onSignal: options.onSignal } : {}),
  });
  const runner = startRunner({
    config,
    options,
    store,
    owner,
    guard,
    handler,
    clients,
    metrics,
    status,
  });
  const startHealth = watchAgentStarts(agents, runner, logger);
  starts = startHealth;
  started.undoWith(() => startHealth.close());
  observeWorker(metrics, {
    store,
    pool: agents.pool,
    starts: startHealth,
    consuming: () => runner.consuming(),
    roomsRoot: agents.rooms.root,
  });

  const life = { accepting: true };
  const server = await serveHealth(config, metrics, {
    store,
    pool: agents.pool,
    starts: startHealth,
    consuming: () => runner.consuming(),
    status,
    life,
  });
  started.undoWith(() => server.close());
  void guard.revoked.then((why) => runner.handBackAll(`the agent warden revoked this worker: ${why}`));
  agents.pool.warm();
  started.undoWith(() => runner.close());
  await runner.start();
  status.start(async () => {
    await runner.drain();
    // The runner hands an aborted turn's thread back at once; "drained" waits for its handler too.
    await settleAbortedTurns(running, DRAIN_SETTLE_MS, { logger, metrics });
  });
  started.undoWith(() => status.stop());
  const address = server.server.address();
  const healthUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : config.metricsPort}`;
  logger.info(
    {
      owner,
      pool: config.workerPool,
      concurrency: config.concurrency,
      agent: agents.agent.command,
      healthUrl,
    },
    'worker started',
  );

  const parts = { owner, store, guard, pool: agents.pool, runner, status, upkeep, server, life };
  return {
    queue: store.queue,
    controls: store.controls,
    pool: agents.pool,
    owner,
    healthUrl,
    failed: guard.failed,
    close: ({ graceMs = config.shutdownGraceMs } = {}) => closeWorker(config, parts, graceMs, logger),
  };
}

/** Where the worker's agents run, said in its log: isolated, or (turned off by the operator) not. */
async function isolateAgents(
  config: Readonly<WorkerConfig>,
  hostTicket: () => string | undefined,
  logger: Logger,
): Promise<AgentIsolation> {
  const isolation = await agentIsolation(config, hostTicket, logger.child({ component: 'acp' }));
  const { describe } = isolation.sandbox;
  if (isolation.sandbox.kind === 'off')
    logger.warn({ isolation: describe }, 'agents are not isolated from the worker');
  else logger.info({ isolation: describe }, 'agents run isolated');
  return isolation;
}

/** Each thread's session across turns and workers, in its room, under its disk budget. */
function sessionContinuity(
  store: Store,
  { agent, pool, rooms, budget }: WorkerAgents,
  sandbox: AgentIsolation['sandbox'],
  logger: Logger,
): SessionContinuity {
  return new SessionContinuity(store.sessions, pool, {
    agent: [agent.command, ...agent.args].join(' '),
    cwd: (thread) => sandbox.sessionCwd(rooms.roomOf(thread)),
    onReset: (thread) => rooms.reset(thread),
    admit: (thread) => budget.admit(thread),
    onMoved: (thread, from) => {
      store.controls
        .announceMove(thread, from)
        .catch((error: unknown) =>
          logger.warn({ err: error, thread, from }, 'move not announced; the old worker finds it on its own'),
        );
    },
  });
}

interface RunnerParts {
  config: Readonly<WorkerConfig>;
  options: WorkerOptions;
  store: Store;
  owner: string;
  guard: GuardedWorker;
  handler: TurnHandler;
  clients: ReadonlyMap<string, PlatformClient>;
  metrics: Metrics;
  status: WorkerStatusReporter;
}

/** What claims this worker's threads and runs their turns, delivers replies, and counts both. */
function startRunner(parts: RunnerParts) {
  const { config, options, store, metrics, status } = parts;
  const logger = options.logger;
  return store.runner({
    owner: parts.owner,
    presence: parts.guard.warden,
    concurrency: config.concurrency,
    pool: config.workerPool,
    logger: logger.child({ component: 'runner' }),
    ...(options.consumerTiming ? { consumerTiming: options.consumerTiming } : {}),
    handler: parts.handler,
    // The platform first: a reply counts as sent (logged, reported) only once the platform took it.
    replies: replySink(new PlatformReplySink(parts.clients), [
      new LogReplySink(logger.child({ component: 'outbox' }), parts.clients),
      ...(options.sinks ?? []),
    ]),
    delivery: {
      ...options.delivery,
      retry: {
        horizonMs: config.replyRetryHorizonMs,
        maxDelayMs: config.replyRetryMaxDelayMs,
        ...options.delivery?.retry,
      },
    },
    events: {
      batchEnded: (outcome, thread) => {
        status.served(thread);
        metrics.turnsTotal.inc({ outcome });
        if (outcome === 'dead_lettered') metrics.deadLetteredBatchesTotal.inc();
      },
      leaseLost: () => metrics.leaseExpiriesTotal.inc(),
      fenced: () => metrics.fenceRejectionsTotal.inc(),
      revived: ({ leasesRevived, doorbellsRevived, takenOver, heldBack }) => {
        metrics.sweeperRevivalsTotal.inc({ reason: 'lease' }, leasesRevived);
        metrics.sweeperRevivalsTotal.inc({ reason: 'doorbell' }, doorbellsRevived);
        metrics.sweeperRevivalsTotal.inc({ reason: 'owner_gone' }, takenOver);
        metrics.takeoversHeldBackTotal.inc(heldBack);
      },
      replyDelivery: (outcome) => metrics.replyDeliveriesTotal.inc({ outcome }),
      passedOn: () => metrics.doorbellsPassedOnTotal.inc(),
      lineStalled: () => metrics.routeLineStallsTotal.inc(),
    },
  });
}

type Runner = ReturnType<typeof startRunner>;

/** A worker whose agent does not start takes no new threads until one does (it tries on its own). */
function watchAgentStarts({ pool, agent }: WorkerAgents, runner: Runner, logger: Logger): AgentStartHealth {
  return new AgentStartHealth({
    probe: () => pool.probeStart(),
    holding: ({ consecutive, lastError }) => {
      runner.pauseTaking();
      logger.error(
        { consecutive, err: lastError, agent: agent.command },
        "the agent cannot start; this worker takes no new threads and reports not ready until a start works (it tries one on its own). Check AGENT_COMMAND, AGENT_INIT_TIMEOUT_MS and the agent's setup",
      );
    },
    recovered: () => {
      runner.resumeTaking();
      logger.info({ agent: agent.command }, 'the agent starts again; this worker takes threads again');
    },
  });
}

/** `/livez`, `/readyz` and `/metrics`, listening before any claim: a port taken fails the start early. */
function serveHealth(
  config: Readonly<WorkerConfig>,
  metrics: Metrics,
  parts: WorkerProbes & { status: WorkerStatusReporter; life: { accepting: boolean } },
): Promise<FastifyInstance> {
  const { store, pool, starts, consuming, status, life } = parts;
  const endpoint = { port: config.metricsPort, host: config.metricsHost, metricsToken: config.metricsToken };
  return startHealthServer(endpoint, metrics, {
    notAccepting: () =>
      !life.accepting
        ? 'shutting down'
        : status.draining
          ? 'drained by an operator (restart it to take turns again)'
          : undefined,
    redis: () => store.ready(),
    consuming,
    agentProblem: () => {
      if (!starts.holding) return undefined;
      const { consecutive, lastError } = pool.startFailures;
      return `agent cannot start (${consecutive} failures in a row; last: ${lastError}); check AGENT_COMMAND and the agent's setup`;
    },
  });
}

interface WorkerParts {
  owner: string;
  store: Store;
  guard: GuardedWorker;
  pool: SessionPool;
  runner: Runner;
  status: WorkerStatusReporter;
  upkeep: ThreadUpkeep;
  server: FastifyInstance;
  life: { accepting: boolean };
}

/**
 * Not ready at once; the running turns get `graceMs`, the rest are handed back; then the agents, the
 * warden, the health server and Redis, in that order, within `shutdownDeadlineMs`.
 */
async function closeWorker(
  config: Readonly<WorkerConfig>,
  parts: WorkerParts,
  graceMs: number,
  logger: Logger,
): Promise<void> {
  const { owner, store, guard, pool, runner, status, upkeep, server } = parts;
  const { warden } = guard;
  parts.life.accepting = false;
  upkeep.stop();
  const started = performance.now();
  const inOrder = (async () => {
    await runner.close(graceMs);
    await status.stop();
    logger.info({ ms: Math.round(performance.now() - started) }, 'turns finished or handed back');
    await pool.close();
    await warden.close();
    await server.close();
    await upkeep.closeControls();
    await store.close();
    logger.info({ owner }, 'worker stopped; threads handed back');
  })();
  const deadlineMs = shutdownDeadlineMs({ ...config, shutdownGraceMs: graceMs });
  const outcome = await within(inOrder, deadlineMs);
  if (outcome === 'done') return;
  // Redis (or an agent) held the orderly close up: what was not handed back is left to the
  // sweeper, as after a crash (the leases expire), and no agent may outlive the worker. The warden
  // is let go last: with the agents gone it has nothing left to kill.
  const notHandedBack = runner.running;
  store.disconnect();
  await Promise.allSettled([pool.close(), server.close(), upkeep.closeControls()]);
  await warden.close();
  logger.warn(
    { owner, deadlineMs, notHandedBack, ...(outcome === 'timed out' ? {} : outcome) },
    `shutdown cut short (${outcome === 'timed out' ? 'not finished in time' : 'failed'}; is Redis reachable?): agents killed, threads not handed back are left to the sweeper`,
  );
}
