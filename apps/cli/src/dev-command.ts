import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { builtInAgentCommand } from '@tributary/agent';
import { DEFAULT_REDIS_URL, LOOPBACK, loadIngressConfig, loadWorkerConfig } from '@tributary/config';
import { discoverBotIdentities, startIngress, webhookDefinitions } from '@tributary/ingress';
import { createLogger, createMetrics, platformCallHooks } from '@tributary/observability';
import { createPlatformClients } from '@tributary/platforms';
import { startWorker } from '@tributary/worker';
import type { Logger } from 'pino';
import { type Command, refuseArguments } from './command-line.js';
import { loadDevHarness } from './dev-harness.js';
import { type DevRedis, devRedis } from './dev-redis.js';
import { devDataDir, removeDevStack, writeDevStack } from './dev-stack-file.js';
import { readableLog } from './readable-log.js';
import { untilSignal } from './until-signal.js';

/** The built-in agent takes a moment per turn, so messages sent together visibly become one batch. */
const DEV_AGENT_DEFAULTS = JSON.stringify({ delayMs: 1500 });

/**
 * `tributary dev`: Redis (the configured one, or a private one), ingress, one worker with its agent
 * (the built-in one unless AGENT_COMMAND names another), and a local reply receiver standing in for a
 * chat platform, all in this process.
 */
export const devCommand: Command = {
  async run(argv) {
    refuseArguments('dev', argv);
    await runDev();
  },
};

/**
 * A name for this project's dev stack in a Redis other projects may share (the machine's Redis): its
 * threads and their history are not another checkout's.
 */
function projectPrefix(root: string): string {
  return `trib-dev-${createHash('sha256').update(root).digest('hex').slice(0, 12)}`;
}

async function runDev(): Promise<void> {
  const env = process.env;
  // Output goes to a person, often through a pipe (`npm run dev | tee log`) whose reader Ctrl-C ends
  // first: then there is nobody to tell, and the stop must go on rather than die of EPIPE.
  let reader = true;
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    reader = false;
  });
  const say = (line: string) => {
    if (reader) process.stdout.write(`${line}\n`);
  };
  const logger = createLogger(
    env.LOG_LEVEL ?? 'warn',
    readableLog((line) => say(`  ${line}`)),
  );
  const configured = env.AGENT_COMMAND?.trim();
  // A private redis-server runs in a process group of its own (out of reach of Ctrl-C, so it outlives
  // the worker's hand-off); whatever way this process leaves, it takes that server with it.
  let redisServer: DevRedis | undefined;
  const stopRedisNow = () => redisServer?.stopNow();
  process.once('exit', stopRedisNow);
  // Armed first: a Ctrl-C while the stack starts (or the instant its banner shows) stops it in order
  // once it is up, so no private redis-server or agent is left behind. Another Ctrl-C later (not the
  // same one delivered twice, as `npm run` does) stops Redis and exits at once: the way out of a stop
  // that hangs.
  let starting = true;
  const stopped = untilSignal(logger, stopRedisNow).then(() => {
    if (starting) say('tributary dev: stopping as soon as it has started…');
  });
  say(
    `tributary dev: starting Redis, ingress, a worker and ${configured ? 'its agent' : 'the built-in agent'}…`,
  );
  const { redis, replies, ingress, worker, agent, adminToken } = await startStack(
    env,
    logger,
    say,
    (started) => {
      redisServer = started;
    },
  );
  starting = false;
  say(`
  ingress      ${ingress.url}   (webhooks under /webhooks/*, health /livez /readyz)
  console      ${ingress.adminUrl}/   (admin API under /admin, /metrics; token ${adminToken})
  redis        ${redis.url}${redis.started ? '   (private, AOF in .tributary/redis)' : ''}
  worker       ${worker.healthUrl}   (/livez /readyz /metrics)
  agent        ${agent}
  replies      ${replies.urls.gatewayReply}

  In another terminal:
    npx tributary send "check the build" "actually wait" "and run e2e"
    npx tributary admin threads
  The first message starts a turn at once; the two sent during it arrive as ONE batched prompt.
  Ctrl-C stops everything.`);

  const failure = await Promise.race([stopped.then(() => undefined), worker.failed]);
  if (failure) say(`tributary dev: the worker cannot go on (${failure.message}); stopping`);
  say('tributary dev: stopping (threads are handed back)…');
  await ingress.close();
  await worker.close(failure ? { graceMs: 0 } : {});
  await replies.close();
  await redis.stop();
  await removeDevStack();
}

/**
 * Redis, the reply receiver, ingress and the worker, and the dev stack file `send` finds. A part that
 * fails to start stops those started before it: a private redis-server left running would hold the
 * project's AOF, which the next start's own redis-server would then write too.
 */
async function startStack(
  env: NodeJS.ProcessEnv,
  logger: Logger,
  say: (line: string) => void,
  redisStarted: (redis: DevRedis) => void,
) {
  const started: (() => Promise<void>)[] = [];
  try {
    const dataDir = devDataDir();
    const redis = await devRedis(env.REDIS_URL ?? DEFAULT_REDIS_URL, dataDir);
    redisStarted(redis);
    started.push(() => redis.stop());
    if (redis.started) say(`tributary dev: private Redis at ${redis.url} (AOF in .tributary/redis)`);
    const gatewaySecret = env.GATEWAY_SECRET ?? randomBytes(24).toString('hex');
    // The console and `tributary admin` of this stack sign in with it (it is printed and kept in
    // .tributary/dev.json, readable by the user only), unless the operator brought tokens of their own.
    const adminToken = env.ADMIN_TOKEN ?? randomBytes(24).toString('hex');
    const replies = await (await loadDevHarness()).startFakePlatformApi({ gatewaySecret });
    started.push(() => replies.close());
    const stackEnv = {
      ...env,
      REDIS_URL: redis.url,
      REDIS_PREFIX: env.REDIS_PREFIX ?? projectPrefix(process.cwd()),
      // The local Redis of a laptop is rarely tuned; say so rather than refuse to start.
      REDIS_SAFETY: env.REDIS_SAFETY ?? 'warn',
      GATEWAY_SECRET: gatewaySecret,
      ADMIN_TOKEN: adminToken,
      // A laptop's stack is this machine's alone unless told otherwise: webhooks, the admin listener
      // and the worker's health all listen on loopback.
      HOST: env.HOST ?? LOOPBACK,
      ADMIN_HOST: env.ADMIN_HOST ?? LOOPBACK,
      ADMIN_PORT: env.ADMIN_PORT ?? '0',
      METRICS_HOST: env.METRICS_HOST ?? LOOPBACK,
      GATEWAY_REPLY_URL: env.GATEWAY_REPLY_URL ?? replies.urls.gatewayReply,
      METRICS_PORT: env.METRICS_PORT ?? '0',
      // Ctrl-C should not wait long for a turn; it is handed back and resumes on the next start.
      SHUTDOWN_GRACE_MS: env.SHUTDOWN_GRACE_MS ?? '2000',
    };
    const ingressConfig = loadIngressConfig(stackEnv);
    const workerConfig = loadWorkerConfig(stackEnv);
    const metrics = createMetrics(undefined, { logger });
    const clients = createPlatformClients(ingressConfig.platforms, platformCallHooks(metrics, logger));
    const identities = await discoverBotIdentities(ingressConfig.platforms, clients, logger);
    const ingress = await startIngress(ingressConfig, {
      logger: logger.child({ component: 'ingress' }),
      webhooks: webhookDefinitions(ingressConfig.platforms, identities, ingressConfig),
      clients,
      metrics,
    });
    started.push(() => ingress.close());
    // A local playground: `@agent` lines script the built-in agent here, never in `tributary worker`.
    const scripting = env.TRIBUTARY_AGENT_SCRIPTING ?? 'on';
    const worker = await startWorker(workerConfig, {
      logger: logger.child({ component: 'worker' }),
      builtInAgent: builtInAgentCommand(),
      agentEnv: {
        TRIBUTARY_AGENT_DEFAULTS: env.TRIBUTARY_AGENT_DEFAULTS ?? DEV_AGENT_DEFAULTS,
        TRIBUTARY_AGENT_SCRIPTING: scripting,
        // Unsandboxed, the built-in agent's sessions live with the project, beside the Redis that
        // names them, rather than in one folder of every run's; sandboxed, each thread's agent home
        // (under AGENT_WORKSPACES, in the project too) holds them.
        ...(workerConfig.agentSandbox === 'off'
          ? { TRIBUTARY_AGENT_STATE_DIR: env.TRIBUTARY_AGENT_STATE_DIR ?? join(dataDir, 'agent') }
          : {}),
      },
    });
    started.push(() => worker.close());
    await writeDevStack({
      ingressUrl: ingress.url,
      gatewaySecret,
      repliesUrl: replies.origin,
      adminUrl: ingress.adminUrl,
      adminToken,
    });
    const custom = workerConfig.agentCommand;
    const agent = custom
      ? `${[custom.command, ...custom.args].join(' ')}   (AGENT_COMMAND)`
      : `built-in, @agent scripting ${scripting} (TRIBUTARY_AGENT_SCRIPTING)`;
    return { redis, replies, ingress, worker, agent, adminToken };
  } catch (error) {
    for (const stop of started.reverse()) {
      await stop().catch((stopError: unknown) =>
        logger.warn({ err: stopError }, 'a part of the dev stack did not stop after the failed start'),
      );
    }
    throw error;
  }
}
