import { DEFAULT_INHERITED_ENV, SessionPool } from '@tributary/acp';
import { builtInAgentCommand } from '@tributary/agent';
import type { WorkerConfig } from '@tributary/config';
import {
  BullDoorbell,
  ControlSubscriber,
  checkRedisSafety,
  type QueueConfig,
  queueConfig,
  ThreadQueue,
  TurnRunner,
} from '@tributary/queue';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { GatewayReplySink } from './gateway-reply-sink.js';
import { LogReplySink } from './log-reply-sink.js';
import { Outbox, type ReplySink } from './outbox.js';
import { SessionContinuity } from './session-continuity.js';
import { createTurnHandler } from './turn-handler.js';
import type { TurnSignalListener } from './turn-signals.js';

export interface WorkerOptions {
  logger: Logger;
  /** Reply sinks on top of the log (and the gateway, when GATEWAY_REPLY_URL is set). */
  sinks?: ReplySink[];
  /** Queue tuning not exposed as environment variables (tests shorten leases and retries). */
  queue?: Partial<QueueConfig>;
  /** Variables set in the agent's environment on top of the allowlist. */
  agentEnv?: Record<string, string>;
  onSignal?: TurnSignalListener;
}

export interface RunningWorker {
  readonly queue: ThreadQueue;
  readonly pool: SessionPool;
  /** Stops taking turns, hands running threads back, stops the agent process group. */
  close(): Promise<void>;
}

/** Raised by `/cancel`: the turn ends `cancelled`, its batch is committed, buffered messages run next. */
export class CancelledByUser extends Error {
  override name = 'CancelledByUser';
}

export async function startWorker(
  config: Readonly<WorkerConfig>,
  options: WorkerOptions,
): Promise<RunningWorker> {
  const { logger } = options;
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 3 });
  await checkRedisSafety(redis, config.redisSafety, logger);

  const doorbell = new BullDoorbell(redis, config.redisPrefix);
  const queue = new ThreadQueue(
    redis,
    queueConfig({
      prefix: config.redisPrefix,
      maxBatchMessages: config.processingMode === 'per-message' ? 1 : config.maxBatchMessages,
      maxBatchTokens: config.maxBatchTokens,
      ...options.queue,
    }),
    doorbell,
  );

  const agent = config.agentCommand ?? builtInAgentCommand();
  const pool = new SessionPool({
    agent: {
      ...agent,
      inheritEnv: [...DEFAULT_INHERITED_ENV, ...config.agentEnv],
      env: options.agentEnv ?? {},
    },
    cwd: config.agentCwd,
    maxSessions: config.concurrency,
    cancelTimeoutMs: config.cancelTimeoutMs,
    permissionPolicy: config.permissionPolicy,
    logger: logger.child({ component: 'acp' }),
  });

  const sinks: ReplySink[] = [new LogReplySink(logger.child({ component: 'outbox' }))];
  if (config.gatewayReplyUrl) sinks.push(new GatewayReplySink(config.gatewayReplyUrl, config.gatewaySecret));
  sinks.push(...(options.sinks ?? []));
  const keysOf = (thread: string) => queue.keys(thread);
  const outbox = new Outbox(
    redis,
    { outbox: (thread, batchId, kind) => keysOf(thread).outbox(batchId, kind) },
    sinks,
  );

  const running = new Map<string, AbortController>();
  const controls = new ControlSubscriber(redis, config.redisPrefix, ({ thread }) => {
    running.get(thread)?.abort(new CancelledByUser('cancelled by the user'));
  });
  await controls.start();

  const runner = new TurnRunner({
    queue,
    doorbell,
    connection: redis,
    concurrency: config.concurrency,
    logger: logger.child({ component: 'runner' }),
    handler: createTurnHandler({
      pool,
      continuity: new SessionContinuity(
        redis,
        { session: (t) => keysOf(t).session },
        pool,
        [agent.command, ...agent.args].join(' '),
      ),
      outbox,
      limits: config,
      logger,
      running,
      ...(options.onSignal ? { onSignal: options.onSignal } : {}),
    }),
  });
  await runner.start();
  logger.info(
    { owner: runner.owner, concurrency: config.concurrency, agent: agent.command },
    'worker started',
  );

  return {
    queue,
    pool,
    async close() {
      await runner.close();
      await pool.close();
      await controls.close();
      await doorbell.close();
      redis.disconnect();
      logger.info({ owner: runner.owner }, 'worker stopped; threads handed back');
    },
  };
}
