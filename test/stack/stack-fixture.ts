import { generateKeyPairSync, sign } from 'node:crypto';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtInAgentCommand } from '@tributary/agent';
import { loadIngressConfig, loadWorkerConfig } from '@tributary/config';
import {
  discoverBotIdentities,
  type RunningIngress,
  startIngress,
  webhookDefinitions,
} from '@tributary/ingress';
import { createMetrics, type Metrics, platformCallHooks } from '@tributary/observability';
import { createPlatformClients, signedRequestHeaders, slackSignature } from '@tributary/platforms';
import { openConnection, type RedisClient } from '@tributary/queue';
import {
  checkSpokenAcpVersion,
  deletePrefix,
  type FakeApiCall,
  type FakePlatformApi,
  type FakePlatformApiOptions,
  type RedisHandle,
  runAcpVersionEnv,
  startFakePlatformApi,
  startRedis,
  uniquePrefix,
} from '@tributary/testkit';
import { type RunningWorker, startWorker } from '@tributary/worker';
import { pino } from 'pino';
import { type GatewayMessage, gatewayEventBody } from '../support/gateway-event.js';

export const STACK_SECRETS = {
  SLACK_SIGNING_SECRET: 'stack-slack-signing-secret',
  TELEGRAM_SECRET_TOKEN: 'stack-telegram-secret',
  DISCORD_FORWARDER_SECRET: 'stack-discord-forwarder-secret',
  GATEWAY_SECRET: 'stack-gateway-secret',
};

/**
 * Posts one Telegram group message as Telegram would deliver it, `@tributary_bot` marked as a mention.
 * Update and message ids share `id`: each test picks ids of its own.
 */
export async function postTelegramMessage(
  stack: Stack,
  chatId: number,
  id: number,
  text: string,
  from = { id: 42, first_name: 'Ada', username: 'ada' },
) {
  const mention = text.indexOf('@tributary_bot');
  const body = JSON.stringify({
    update_id: id,
    message: {
      message_id: id,
      date: Math.floor(Date.now() / 1000),
      chat: { id: chatId, type: 'group', title: 'team' },
      from: { ...from, is_bot: false },
      text,
      ...(mention >= 0 ? { entities: [{ type: 'mention', offset: mention, length: 14 }] } : {}),
    },
  });
  return stack.post('/webhooks/telegram', body, {
    'x-telegram-bot-api-secret-token': STACK_SECRETS.TELEGRAM_SECRET_TOKEN,
  });
}

/**
 * Posts message `n` of a generic-gateway conversation (openab.gateway.event.v1), signed; senders
 * alternate between two users. Re-posting the same `n` is a redelivery of the same message. Its thread
 * key is `gateway:cli:<channel>:<thread>`.
 */
export function postGatewayMessage(stack: Stack, n: number, thread: string, text: string, channel = 'stack') {
  const body = JSON.stringify({
    schema: 'openab.gateway.event.v1',
    event_id: `evt-${n}`,
    timestamp: new Date().toISOString(),
    platform: 'cli',
    event_type: 'message',
    channel: { id: channel, type: 'thread', thread_id: thread },
    sender: { id: `u${n % 2}`, name: `user${n % 2}`, display_name: `User ${n % 2}`, is_bot: false },
    content: { type: 'text', text },
    mentions: [],
    message_id: `msg-${n}`,
  });
  return stack.post('/webhooks/gateway', body, signedRequestHeaders(STACK_SECRETS.GATEWAY_SECRET, body));
}

/** Posts a Slack Events API body, signed as Slack signs it, now. */
export function postSlackEvent(stack: Stack, body: string) {
  const timestamp = String(Math.floor(Date.now() / 1000));
  return stack.post('/webhooks/slack', body, {
    'x-slack-request-timestamp': timestamp,
    'x-slack-signature': slackSignature(STACK_SECRETS.SLACK_SIGNING_SECRET, timestamp, body),
  });
}

/** Posts one signed gateway event (test/support/gateway-event.ts). */
export function postGatewayEvent(stack: Stack, message: GatewayMessage) {
  const body = gatewayEventBody(message);
  return stack.post('/webhooks/gateway', body, signedRequestHeaders(STACK_SECRETS.GATEWAY_SECRET, body));
}

/** Posts what `tributary discord-forwarder` posts for a gateway message, signed with its secret. */
export function postDiscordForwarded(stack: Stack, body: string) {
  return stack.post(
    '/webhooks/discord/forwarded',
    body,
    signedRequestHeaders(STACK_SECRETS.DISCORD_FORWARDER_SECRET, body),
  );
}

/** The Discord application's key pair: interactions are signed with it as Discord signs them. */
const DISCORD_KEYS = generateKeyPairSync('ed25519');
const DISCORD_PUBLIC_KEY = Buffer.from(
  DISCORD_KEYS.publicKey.export({ format: 'jwk' }).x!,
  'base64url',
).toString('hex');

/** Posts one Discord interaction, signed with the application's key as Discord signs it. */
export function postDiscordInteraction(stack: Stack, body: string) {
  const timestamp = String(Math.floor(Date.now() / 1000));
  return stack.post('/webhooks/discord', body, {
    'x-signature-timestamp': timestamp,
    'x-signature-ed25519': sign(null, Buffer.from(timestamp + body), DISCORD_KEYS.privateKey).toString('hex'),
  });
}

/** Ingress and a worker, in this process, on a real Redis, replying to a fake platform API over HTTP. */
export interface Stack {
  ingress: RunningIngress;
  worker: RunningWorker;
  api: FakePlatformApi;
  redis: RedisClient;
  /** Where the stack's Redis is, for a store of the test's own. */
  redisUrl: string;
  prefix: string;
  ingressMetrics: Metrics;
  workerMetrics: Metrics;
  post(
    path: string,
    body: string,
    headers: Record<string, string>,
  ): Promise<{ status: number; body: Record<string, unknown> }>;
  /** Calls the fake recorded for a platform and method, in arrival order. */
  calls(platform: string, method: string): FakeApiCall[];
  /** The last log lines at warn or above, kept though the stack is silent, for a failure to name. */
  warnings(): Record<string, unknown>[];
  /** Starts another worker (closed with the stack): `env` over the stack's, `agentEnv` over its agent's. */
  addWorker(env: Record<string, string>, agentEnv?: Record<string, string>): Promise<RunningWorker>;
  close(): Promise<void>;
}

/** How many warn-or-above lines a stack keeps: enough to explain a stuck thread, bounded for long runs. */
const KEPT_WARNINGS = 200;

/**
 * `given`: a server or cluster the caller started and stops; by default the stack starts its own.
 * `agentEnv`: set in the built-in agent's environment too. `platforms`: how the fake platforms behave.
 */
export async function startStack(
  env: Record<string, string> = {},
  given?: RedisHandle,
  agentEnv: Record<string, string> = {},
  platforms: FakePlatformApiOptions = {},
): Promise<Stack> {
  const server = given ?? (await startRedis());
  const redis = openConnection(server.url, { kind: 'patient' });
  const prefix = uniquePrefix('stack');
  const api = await startFakePlatformApi({ ...platforms, gatewaySecret: STACK_SECRETS.GATEWAY_SECRET });
  const stateDir = await mkdtemp(join(tmpdir(), 'tributary-stack-agent-'));
  const stackEnv = {
    ...STACK_SECRETS,
    REDIS_URL: server.url,
    REDIS_PREFIX: prefix,
    PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_PORT: '0',
    SLACK_BOT_TOKEN: api.tokens.slack,
    SLACK_API_URL: api.urls.slack,
    SLACK_BOT_USER_ID: 'UBOT',
    TELEGRAM_BOT_TOKEN: api.tokens.telegram,
    TELEGRAM_API_URL: api.urls.telegram,
    TELEGRAM_BOT_USERNAME: 'tributary_bot',
    DISCORD_BOT_TOKEN: api.tokens.discord,
    DISCORD_API_URL: api.urls.discord,
    DISCORD_BOT_USER_ID: '900',
    DISCORD_PUBLIC_KEY,
    GATEWAY_REPLY_URL: api.urls.gatewayReply,
    // The fake serves every platform's files from its own origin.
    SLACK_FILES_URL: api.origin,
    DISCORD_CDN_URL: api.origin,
    GATEWAY_FILES_URL: api.origin,
    ...env,
  };
  // Silent unless asked, but the agents' negotiated version is kept to prove the run's version, and the
  // last warnings for a stuck run to name.
  const initialized: Record<string, unknown>[] = [];
  const warnings: Record<string, unknown>[] = [];
  const logger = pino(
    { level: process.env.STACK_LOG_LEVEL ?? 'info' },
    {
      write(line: string) {
        const entry = JSON.parse(line) as Record<string, unknown>;
        if (entry.msg === 'agent initialized') initialized.push(entry);
        else if (process.env.STACK_LOG_LEVEL) process.stdout.write(line);
        if ((entry.level as number) < 40) return;
        warnings.push(entry);
        if (warnings.length > KEPT_WARNINGS) warnings.shift();
      },
    },
  );
  const ingressConfig = loadIngressConfig(stackEnv);
  const ingressMetrics = createMetrics();
  const ingressClients = createPlatformClients(
    ingressConfig.platforms,
    platformCallHooks(ingressMetrics, logger),
  );
  // As `tributary ingress` does: identities not configured are asked of the (fake) platforms.
  const identities = await discoverBotIdentities(ingressConfig.platforms, ingressClients, logger);
  const ingress = await startIngress(ingressConfig, {
    logger,
    webhooks: webhookDefinitions(ingressConfig.platforms, identities),
    clients: ingressClients,
    metrics: ingressMetrics,
  });
  /** A worker on the stack's Redis, with `env` over the stack's and `extraAgentEnv` over its agent's. */
  const launchWorker = (
    env: Record<string, string>,
    extraAgentEnv: Record<string, string>,
    metrics: Metrics,
  ) =>
    startWorker(
      loadWorkerConfig({
        WORKER_CONCURRENCY: '2',
        METRICS_PORT: '0',
        SHUTDOWN_GRACE_MS: '0',
        // These tests read what the agent received from its state folder, outside any sandbox.
        AGENT_SANDBOX: 'off',
        ...stackEnv,
        ...env,
      }),
      {
        logger,
        builtInAgent: builtInAgentCommand(),
        metrics,
        queue: { retryDelayMs: 100 },
        // Tests script the agent with `@agent` lines in their messages.
        agentEnv: {
          TRIBUTARY_AGENT_STATE_DIR: stateDir,
          TRIBUTARY_AGENT_SCRIPTING: 'on',
          ...runAcpVersionEnv(),
          ...agentEnv,
          ...extraAgentEnv,
        },
      },
    );
  const workerMetrics = createMetrics();
  const worker = await launchWorker({}, {}, workerMetrics);
  const extraWorkers: RunningWorker[] = [];
  return {
    ingress,
    worker,
    api,
    redis,
    redisUrl: server.url,
    prefix,
    ingressMetrics,
    workerMetrics,
    async post(path, body, headers) {
      const response = await fetch(`${ingress.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    },
    calls: (platform, method) => api.calls().filter((c) => c.platform === platform && c.method === method),
    warnings: () => [...warnings],
    async addWorker(env, extraAgentEnv = {}) {
      const added = await launchWorker(env, extraAgentEnv, createMetrics());
      extraWorkers.push(added);
      return added;
    },
    async close() {
      await ingress.close();
      await Promise.all([worker, ...extraWorkers].map((running) => running.close()));
      await api.close();
      await deletePrefix(redis, prefix);
      redis.disconnect();
      if (!given) await server.stop();
      await rm(stateDir, { recursive: true, force: true });
      checkSpokenAcpVersion(initialized);
    },
  };
}

/**
 * Replaces a file whole, as the kubelet swaps a ConfigMap's files: a reader never sees it truncated
 * (writeFile empties the file first, and an empty route file is a valid, empty table).
 */
export async function replaceFile(path: string, text: string): Promise<void> {
  await writeFile(`${path}.next`, text);
  await rename(`${path}.next`, path);
}
