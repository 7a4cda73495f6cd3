import { mkdir, statfs } from 'node:fs/promises';
import { SessionPool } from '@tributary/acp';
import { processingModeOf, sharedQueueOptions, steersOn, type WorkerConfig } from '@tributary/config';
import {
  createMetrics,
  type Metrics,
  observeFleet,
  platformCallCounter,
  type SecretScrubber,
} from '@tributary/observability';
import type { ThreadParentMessage } from '@tributary/packing';
import { createPlatformClients, type PlatformClient, platformOfThread } from '@tributary/platforms';
import {
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
import { agentIsolation } from './agents/agent-isolation.js';
import { agentCommandConfig } from './agents/agent-setup.js';
import { AgentStartHealth } from './agents/agent-start-health.js';
import { knownSecrets } from './agents/known-secrets.js';
import { AttachmentContents } from './attachments/attachment-contents.js';
import { ByteBudget } from './attachments/byte-budget.js';
import { type CanaryTiming, DoorbellCanary } from './health/doorbell-canary.js';
import { startHealthServer } from './health/health-server.js';
import { WorkerStatusReporter } from './health/worker-status.js';
import { LogReplySink } from './replies/log-reply-sink.js';
import type { OutboundSink } from './replies/outbox.js';
import { PlatformReplySink } from './replies/platform-reply-sink.js';
import { ReplyCut } from './replies/reply-cut.js';
import { replySink } from './replies/reply-sink.js';
import { ReplyStream } from './replies/reply-stream.js';
import { RoomBudget } from './rooms/room-budget.js';
import { startRoomSweep } from './rooms/room-expiry.js';
import { ThreadRooms } from './rooms/thread-rooms.js';
import { StartedSteps } from './started-steps.js';
import { RunningTurns, settleAbortedTurns } from './turns/running-turns.js';
import { SessionContinuity } from './turns/session-continuity.js';
import { createTurnHandler } from './turns/turn-handler.js';
import { prometheusTurnObserver } from './turns/turn-observer.js';
import { guardedTurns } from './turns/turn-output.js';
import { TurnReactions } from './turns/turn-reactions.js';
import type { TurnSignalListener } from './turns/turn-signals.js';
import type { SteeringDeps } from './turns/turn-steering.js';
import { AgentWarden } from './warden/agent-warden.js';

export interface WorkerOptions {
  logger: Logger;
  /** Where delivered replies go on top of the platforms and the log. */
  sinks?: OutboundSink[];
  /** Replies, reactions and thread parents go through these; default: from the configured credentials. */
  clients?: ReadonlyMap<string, PlatformClient>;
  /** Default: a registry of its own, served on METRICS_PORT. */
  metrics?: Metrics;
  canary?: CanaryTiming;
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

/** How often sessions kept for threads that moved elsewhere are looked for (behind the `moved` message). */
const MOVED_CHECK_MS = 10_000;

/**
 * How long an operator's drain waits for the turns it aborted to end (their agents killed, their
 * outcome settled) before it reports drained anyway and says which have not.
 */
const DRAIN_SETTLE_MS = 10_000;

/** Raised by `/cancel`: the turn ends `cancelled`, its batch is committed, buffered messages run next. */
export class CancelledByUser extends Error {
  override name = 'CancelledByUser';
}

export async function startWorker(
  config: Readonly<WorkerConfig>,
  options: WorkerOptions,
): Promise<RunningWorker> {
  const { logger } = options;
  const metrics = options.metrics ?? createMetrics(undefined, { logger });
  const store = Store.open({
    url: config.redisUrl,
    connection: { kind: 'patient' },
    queue: {
      ...sharedQueueOptions(config),
      maxBatchMessages: config.maxBatchMessages,
      leaseMs: config.leaseMs,
      processingMode: (thread) => processingModeOf(config, thread),
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

async function startOn(
  store: Store,
  config: Readonly<WorkerConfig>,
  options: WorkerOptions,
  metrics: Metrics,
  started: StartedSteps,
): Promise<RunningWorker> {
  const { logger } = options;
  // Before anything else: a worker that cannot isolate its agents does not start (docs/adr/0044).
  // Set once the warden runs: an agent host starts this worker's agents under the warden's lease.
  let warden: AgentWarden | undefined;
  const { sandbox, launcher } = await agentIsolation(
    config,
    () => warden?.hostTicket,
    logger.child({ component: 'acp' }),
  );
  if (sandbox.kind === 'off')
    logger.warn({ isolation: sandbox.describe }, 'agents are not isolated from the worker');
  else logger.info({ isolation: sandbox.describe }, 'agents run isolated');
  store.logConnectionErrors(logger.child({ component: 'redis' }));
  await store.checkSafety(config.redisSafety, logger);
  const { queue, doorbell } = store;

  const owner = newOwnerId();
  const failure = settlesOnce<Error>();
  const revocation = settlesOnce<string>();
  // Started before any agent: from the first spawn on, a worker that dies or freezes leaves none behind.
  warden = await AgentWarden.start(
    {
      redisUrl: config.redisUrl,
      prefix: store.queue.config.prefix,
      owner,
      presenceTtlMs: config.presenceTtlMs,
      stallToleranceMs: config.stallToleranceMs,
      takesDirect: store.queue.config.affinity,
      // The host runs the agents only under the warden's lease, and kills them when it breaks.
      ...(sandbox.kind === 'agent-host' ? { agentHostSocket: config.agentHostSocket } : {}),
    },
    logger.child({ owner }),
    {
      revoked: (why) => {
        metrics.workerRevocationsTotal.inc();
        // Its agents are dead and its presence gone: whatever it runs now, another worker may too.
        logger.error({ why }, 'the agent warden revoked this worker; handing its threads back and stopping');
        revocation.settle(why);
        failure.settle(new Error(`the agent warden revoked this worker: ${why}`));
      },
      lost: (error) => {
        logger.error({ err: error }, 'the agent warden is gone; stopping this worker so it can be restarted');
        failure.settle(error);
      },
    },
  );
  started.undoWith(() => warden.close());

  const agent = agentCommandConfig(config, options.agentEnv);
  const secrets = knownSecrets(config, agent);
  const rooms = new ThreadRooms(
    config.agentWorkspaces,
    config.agentWorkspaceOnReset,
    logger.child({ component: 'workspaces' }),
    () => metrics.workspaceFilesStuckTotal.inc(),
  );
  await mkdir(rooms.root, { recursive: true });
  const budget = new RoomBudget({
    rooms,
    budgetBytes: config.agentWorkspaceBudgetBytes,
    onReset: config.agentWorkspaceOnReset,
    onOver: () => metrics.workspaceOverBudgetTurnsTotal.inc(),
  });
  // Set once the runner exists; until then no thread can be held off, and no start has failed.
  let startHealth: AgentStartHealth | undefined;
  const pool = new SessionPool({
    agent,
    cwd: rooms.root,
    rooms,
    sandbox,
    launcher,
    maxSessions: config.maxSessions,
    warmSpares: config.warmSpares,
    spareMemoryBytes: config.warmSparesMemoryMb * 1024 * 1024,
    onSpareMissed: () => metrics.agentSpareMissesTotal.inc(),
    startConcurrency: config.agentStartConcurrency,
    onAgentStartWaited: (ms) => {
      metrics.agentStartWaitSeconds.observe(ms / 1000);
      logger.debug({ waitedMs: Math.round(ms) }, 'agent start began');
    },
    initializeTimeoutMs: config.agentInitTimeoutMs,
    cancelTimeoutMs: config.cancelTimeoutMs,
    permissionPolicy: config.permissionPolicy,
    permissionRules: config.permissionRules,
    ...(config.agentSessionMode === undefined ? {} : { sessionMode: config.agentSessionMode }),
    // An agent host's pids are not this machine's: the host, under the warden's lease, ends those.
    ...(sandbox.kind === 'agent-host' ? {} : { watcher: warden }),
    logger: logger.child({ component: 'acp' }),
    onAgentRestart: () => metrics.agentRestartsTotal.inc(),
    onAgentStarted: () => {
      metrics.agentProcessStartsTotal.inc();
      startHealth?.started();
    },
    onAgentStartFailed: (failures) => {
      metrics.agentStartFailuresTotal.inc();
      logger.warn(
        { consecutive: failures.consecutive, err: failures.lastError, agent: agent.command },
        'agent did not start',
      );
      startHealth?.failed(failures);
    },
  });
  started.undoWith(() => pool.close());

  const clients = options.clients ?? createPlatformClients(config.platforms, platformCallCounter(metrics));
  const running = new RunningTurns();
  const steering: SteeringDeps = {
    on: (thread) => steersOn(config, thread),
    take: (batch, through) => queue.steer(batch, through),
    turns: new Map(),
  };
  const continuity = new SessionContinuity(store.sessions, pool, {
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
  const controls = await store.controls.subscribe((message) => {
    const { thread } = message;
    if (message.action === 'cancel') {
      running.get(thread)?.abort(new CancelledByUser('cancelled by the user'));
    } else if (message.action === 'steer') {
      steering.turns.get(thread)?.poke();
    } else if (message.from === owner && !running.has(thread)) {
      // Another worker took the thread: the session kept here for it is an agent process for nothing.
      void continuity
        .release(thread)
        .catch((error: unknown) =>
          logger.warn({ err: error, thread }, 'session of a moved thread not closed'),
        );
    }
  });
  started.undoWith(() => controls.close());
  const movedCheck = setInterval(() => {
    continuity
      .releaseMoved(owner, (thread) => running.has(thread))
      .then((released) => {
        if (released > 0)
          logger.info({ released }, 'closed the sessions of threads that moved to other workers');
      })
      .catch((error: unknown) => logger.warn({ err: error }, 'moved sessions not checked; trying again'));
  }, MOVED_CHECK_MS);
  movedCheck.unref();
  started.undoWith(() => clearInterval(movedCheck));
  const stopRoomSweep = startRoomSweep({
    rooms,
    releaseSessions: (expired) => continuity.releaseExpired(expired, (thread) => running.has(thread)),
    expired: (thread) => queue.expired(thread),
    idleTtlMs: queue.config.idleTtlMs,
    logger: logger.child({ component: 'workspaces' }),
    swept: ({ bytes, deleted }) => {
      metrics.workspaceBytes.set(bytes);
      metrics.workspacesExpiredTotal.inc(deleted);
    },
  });
  started.undoWith(stopRoomSweep);

  const canary = new DoorbellCanary(doorbell, owner, logger, options.canary);
  const status = new WorkerStatusReporter({
    registry: store.workers,
    owner,
    concurrency: config.concurrency,
    pool,
    running: () => running.threads(),
    logger: logger.child({ component: 'status' }),
  });
  const runner = store.runner({
    owner,
    presence: warden,
    concurrency: config.concurrency,
    logger: logger.child({ component: 'runner' }),
    handler: turnHandler({
      config,
      options,
      store,
      pool,
      continuity,
      steering,
      clients,
      running,
      metrics,
      secrets,
      budget,
    }),
    // The platform first: a reply counts as sent (logged, reported) only once the platform took it.
    replies: replySink(new PlatformReplySink(clients), [
      new LogReplySink(logger.child({ component: 'outbox' }), clients),
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
      doorbellTaken: (queue) => canary.taken(queue),
      passedOn: () => metrics.doorbellsPassedOnTotal.inc(),
    },
  });
  startHealth = new AgentStartHealth({
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
  const starts = startHealth;
  started.undoWith(() => starts.close());
  let accepting = true;
  observeFleet(metrics, () => store.fleetStats());
  const gauges = [
    metrics.acpSessionsLive,
    metrics.agentProcesses,
    metrics.agentSparesReady,
    metrics.agentSparesTarget,
    metrics.agentSpareBytes,
  ];
  const agentGauges = [metrics.agentStartsWaiting, metrics.agentStartsFailing];
  metrics.onScrape([...gauges, ...agentGauges, metrics.doorbellConsumerUp], () => {
    metrics.acpSessionsLive.set(pool.liveSessions);
    metrics.agentProcesses.set(pool.liveProcesses);
    metrics.agentSparesReady.set(pool.readySpares);
    metrics.agentSparesTarget.set(pool.spareTarget);
    metrics.agentSpareBytes.set(pool.bytesPerSpare ?? 0);
    metrics.agentStartsWaiting.set(pool.startsWaiting);
    metrics.agentStartsFailing.set(starts.holding ? 1 : 0);
    metrics.doorbellConsumerUp.set(canary.consuming() ? 1 : 0);
  });
  metrics.onScrape([metrics.workspaceVolumeFreeBytes, metrics.workspaceVolumeSizeBytes], async () => {
    const volume = await statfs(rooms.root);
    metrics.workspaceVolumeFreeBytes.set(volume.bavail * volume.bsize);
    metrics.workspaceVolumeSizeBytes.set(volume.blocks * volume.bsize);
  });
  // Listening before any claim: a port taken fails the start before it touched a thread.
  const endpoint = { port: config.metricsPort, host: config.metricsHost, metricsToken: config.metricsToken };
  const health: FastifyInstance = await startHealthServer(endpoint, metrics, {
    notAccepting: () =>
      !accepting
        ? 'shutting down'
        : status.draining
          ? 'drained by an operator (restart it to take turns again)'
          : undefined,
    redis: () => store.ready(),
    consuming: () => canary.consuming(),
    agentProblem: () => {
      if (!starts.holding) return undefined;
      const { consecutive, lastError } = pool.startFailures;
      return `agent cannot start (${consecutive} failures in a row; last: ${lastError}); check AGENT_COMMAND and the agent's setup`;
    },
  });
  started.undoWith(() => health.close());
  void revocation.settled.then((why) => runner.handBackAll(`the agent warden revoked this worker: ${why}`));
  pool.warm();
  started.undoWith(() => runner.close());
  await runner.start();
  canary.start(() => runner.hasFreeSlot);
  started.undoWith(() => canary.stop());
  status.start(async () => {
    canary.stop();
    await runner.drain();
    // The runner hands an aborted turn's thread back at once; "drained" waits for its handler too.
    await settleAbortedTurns(running, DRAIN_SETTLE_MS, { logger, metrics });
  });
  started.undoWith(() => status.stop());
  const address = health.server.address();
  const healthUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : config.metricsPort}`;
  logger.info({ owner, concurrency: config.concurrency, agent: agent.command, healthUrl }, 'worker started');

  return {
    queue,
    controls: store.controls,
    pool,
    owner,
    healthUrl,
    failed: failure.settled,
    async close({ graceMs = config.shutdownGraceMs } = {}) {
      accepting = false;
      clearInterval(movedCheck);
      stopRoomSweep();
      canary.stop();
      const started = performance.now();
      const inOrder = (async () => {
        await runner.close(graceMs);
        await status.stop();
        logger.info({ ms: Math.round(performance.now() - started) }, 'turns finished or handed back');
        await pool.close();
        await warden.close();
        await health.close();
        await controls.close();
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
      await Promise.allSettled([pool.close(), health.close(), controls.close()]);
      await warden.close();
      logger.warn(
        { owner, deadlineMs, notHandedBack, ...(outcome === 'timed out' ? {} : outcome) },
        `shutdown cut short (${outcome === 'timed out' ? 'not finished in time' : 'failed'}; is Redis reachable?): agents killed, threads not handed back are left to the sweeper`,
      );
    },
  };
}

/** A value settled once, by whichever event comes first (later ones are ignored). */
function settlesOnce<T>(): { settled: Promise<T>; settle(value: T): void } {
  let settle: (value: T) => void = () => {};
  const settled = new Promise<T>((resolve) => {
    settle = resolve;
  });
  return { settled, settle: (value) => settle(value) };
}

interface TurnHandlerDeps {
  config: Readonly<WorkerConfig>;
  options: WorkerOptions;
  store: Store;
  pool: SessionPool;
  continuity: SessionContinuity;
  steering: SteeringDeps;
  clients: ReadonlyMap<string, PlatformClient>;
  running: RunningTurns;
  metrics: Metrics;
  secrets: SecretScrubber;
  budget: RoomBudget;
}

/**
 * What runs a turn on this worker: the agent session, attachments, streaming, reactions; and what the
 * turn hands the commit, scrubbed and bounded (turn-output.ts).
 */
function turnHandler(deps: TurnHandlerDeps): TurnHandler {
  const { config, options, store, pool, continuity, steering, clients, running, metrics, secrets, budget } =
    deps;
  const { logger } = options;
  const parents = store.parents<ThreadParentMessage>();
  const reactions = new TurnReactions(
    clients,
    logger.child({ component: 'reactions' }),
    config.workingReactionDelayMs,
  );
  const cut = new ReplyCut(
    clients,
    config.replyMaxParts,
    logger.child({ component: 'replies' }),
    (platform) => metrics.repliesCutTotal.inc({ platform }),
  );
  const turns = createTurnHandler({
    pool,
    continuity,
    steering,
    fresh: {
      history: (thread) => store.queue.history(thread),
      parent: (thread) => parents.get(thread),
    },
    observer: prometheusTurnObserver(metrics),
    attachments: new AttachmentContents({
      clients,
      limits: {
        maxBytes: config.attachmentMaxBytes,
        maxCount: config.attachmentMaxCount,
        maxTurnBytes: config.attachmentMaxTurnBytes,
        timeoutMs: config.attachmentTimeoutMs,
      },
      budget: new ByteBudget(config.attachmentWorkerBytes),
      logger: logger.child({ component: 'attachments' }),
      onOutcome: (platform, outcome) => metrics.attachmentFetchesTotal.inc({ platform, outcome }),
    }),
    stream: (thread, batchId, target) => {
      const client = clients.get(platformOfThread(thread));
      if (!client?.edit || config.replyStreamIntervalMs === 0) return undefined;
      return new ReplyStream(
        { ...client, edit: client.edit.bind(client), send: client.send.bind(client) },
        target,
        store.postedParts,
        { thread, batchId },
        config.replyStreamIntervalMs,
        logger,
        secrets,
      );
    },
    limits: config,
    slowStartNoticeMs: config.agentSlowStartNoticeMs,
    secrets,
    budget,
    progress: config.progress,
    logger,
    running,
    onRepair: () => metrics.agentTurnRepairsTotal.inc(),
    onSignal: (signal) => {
      reactions.listener(signal);
      options.onSignal?.(signal);
    },
  });
  return guardedTurns(turns, secrets, cut);
}
