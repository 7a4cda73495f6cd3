import { steersOn, type WorkerConfig } from '@tributary/config';
import type { Metrics } from '@tributary/observability';
import type { ThreadParentMessage } from '@tributary/packing';
import { type PlatformClient, platformOfThread } from '@tributary/platforms';
import type { Store, TurnHandler } from '@tributary/queue';
import type { Logger } from 'pino';
import type { WorkerAgents } from '../agents/agent-pool-start.js';
import { AttachmentContents } from '../attachments/attachment-contents.js';
import { ByteBudget } from '../attachments/byte-budget.js';
import { ReplyCut } from '../replies/reply-cut.js';
import { canStream, ReplyStream } from '../replies/reply-stream.js';
import { RouteSpending } from './route-spending.js';
import { RouteTurnSlots } from './route-turn-slots.js';
import type { RunningTurns } from './running-turns.js';
import type { SessionContinuity } from './session-continuity.js';
import type { ThreadProfiles } from './thread-profiles.js';
import { createTurnHandler } from './turn-handler.js';
import { prometheusTurnObserver } from './turn-observer.js';
import { guardedTurns } from './turn-output.js';
import { TurnReactions } from './turn-reactions.js';
import type { TurnSignalListener } from './turn-signals.js';
import { TurnTyping } from './turn-typing.js';

export interface WorkerTurnsDeps {
  config: Readonly<WorkerConfig>;
  store: Store;
  agents: WorkerAgents;
  continuity: SessionContinuity;
  clients: ReadonlyMap<string, PlatformClient>;
  running: RunningTurns;
  profiles: ThreadProfiles;
  metrics: Metrics;
  logger: Logger;
  onSignal?: TurnSignalListener;
}

/**
 * What runs a turn on this worker: the agent session, attachments, streaming, reactions, steering; and
 * what the turn hands the commit, scrubbed and bounded (turn-output.ts).
 */
export function workerTurns(deps: WorkerTurnsDeps): TurnHandler {
  const { config, store, agents, continuity, clients, running, profiles, metrics, logger } = deps;
  const { pool, secrets, budget } = agents;
  const parents = store.parents<ThreadParentMessage>();
  const reactions = new TurnReactions(
    clients,
    logger.child({ component: 'reactions' }),
    config.workingReactionDelayMs,
  );
  const typing = new TurnTyping(clients, logger.child({ component: 'typing' }));
  const cut = new ReplyCut(
    clients,
    config.replyMaxParts,
    logger.child({ component: 'replies' }),
    (platform) => metrics.repliesCutTotal.inc({ platform }),
  );
  const turns = createTurnHandler({
    pool,
    continuity,
    steering: {
      // The thread's route's word, else STEERING's for its platform.
      on: (thread) => profiles.steering(thread) ?? steersOn(config, thread),
      take: (batch, through) => store.queue.turns.steer(batch, through),
    },
    fresh: {
      history: (thread) => store.history.of(thread),
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
    stream: (thread, batchId, target, recipient) => {
      const client = clients.get(platformOfThread(thread));
      if (!canStream(client) || config.replyStreamIntervalMs === 0) return undefined;
      return new ReplyStream(
        client,
        target,
        store.postedParts,
        { thread, batchId },
        { intervalMs: config.replyStreamIntervalMs, maxParts: config.replyMaxParts },
        logger,
        secrets,
        recipient,
      );
    },
    limits: config,
    slowStartNoticeMs: config.agentSlowStartNoticeMs,
    secrets,
    budget,
    progress: config.progress,
    logger,
    running,
    profiles,
    spending: new RouteSpending(store.usage, metrics),
    slots: new RouteTurnSlots(store.turnLimits, store, metrics),
    onRepair: () => metrics.agentTurnRepairsTotal.inc(),
    onSignal: (signal) => {
      reactions.listener(signal);
      typing.listener(signal);
      deps.onSignal?.(signal);
    },
  });
  return guardedTurns(turns, secrets, cut);
}
