import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { loadIngressConfig } from '@tributary/config';
import { createMetrics } from '@tributary/observability';
import { type PlatformClient, signedRequestHeaders, slackSignature } from '@tributary/platforms';
import { deletePrefix, type RedisHandle, startRedis, uniquePrefix } from '@tributary/testkit';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { type RunningIngress, startIngress } from '../src/ingress-service.js';
import { webhookDefinitions } from '../src/webhook-definitions.js';

export const SECRETS = {
  SLACK_SIGNING_SECRET: 'slack-signing-secret-for-tests',
  TELEGRAM_SECRET_TOKEN: 'telegram-secret-token-for-tests',
  DISCORD_FORWARDER_SECRET: 'discord-forwarder-secret-for-tests',
  GATEWAY_SECRET: 'gateway-secret-for-tests',
};

export interface IngressHarness {
  ingress: RunningIngress;
  url: string;
  /** The admin listener: `/metrics`, `/admin`, the console. */
  adminUrl: string;
  redis: Redis;
  server: RedisHandle;
  prefix: string;
  discordKey: KeyObject;
  logs: Record<string, unknown>[];
  post(path: string, body: string | Buffer, headers?: Record<string, string>): Promise<Answer>;
  /** Messages in the queue under this harness's prefix, across all threads. */
  queuedCount(): Promise<number>;
  /** Keys of any thread under the prefix: what a refused request must not leave behind. */
  keyCount(): Promise<number>;
  metrics(): Promise<string>;
  close(): Promise<void>;
}

export interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

export interface HarnessOptions {
  env?: Record<string, string>;
  clients?: ReadonlyMap<string, PlatformClient>;
  /**
   * A private redis-server the test may stop and restart. Its AOF is fsynced on every write: with
   * `everysec`, Redis may postpone writing an acknowledged command while a slow fsync runs (up to
   * 2 s), and a SIGKILL then loses it, which is the trade Redis documents for that setting (the likely
   * cause of one message missing after a SIGKILL in a loaded full run).
   */
  privateRedis?: boolean;
}

export async function startIngressHarness(options: HarnessOptions = {}): Promise<IngressHarness> {
  const server = await startRedis(
    options.privateRedis ? { private: true, appendfsync: 'always' } : { private: false },
  );
  const redis = new Redis(server.url);
  // Outage tests kill Redis under this client too; it reconnects on its own.
  redis.on('error', () => {});
  const prefix = uniquePrefix('in');
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const rawPublicKey = publicKey.export({ format: 'jwk' }).x!;
  const config = loadIngressConfig({
    ...SECRETS,
    DISCORD_PUBLIC_KEY: Buffer.from(rawPublicKey, 'base64url').toString('hex'),
    SLACK_BOT_USER_ID: 'UBOT',
    TELEGRAM_BOT_USERNAME: 'tributary_bot',
    DISCORD_BOT_USER_ID: '900',
    REDIS_URL: server.url,
    REDIS_PREFIX: prefix,
    PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_PORT: '0',
    ...options.env,
  });
  const logs: Record<string, unknown>[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => logs.push(JSON.parse(line)) });
  const metrics = createMetrics();
  const ingress = await startIngress(config, {
    logger,
    webhooks: webhookDefinitions(config.platforms, undefined, config),
    clients: options.clients ?? new Map(),
    metrics,
  });
  const countKeys = async (pattern: string) => {
    let cursor = '0';
    let count = 0;
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      count += keys.length;
    } while (cursor !== '0');
    return count;
  };
  return {
    ingress,
    url: ingress.url,
    adminUrl: ingress.adminUrl,
    redis,
    server,
    prefix,
    discordKey: privateKey,
    logs,
    async post(path, body, headers = {}) {
      const response = await fetch(`${ingress.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
      const text = await response.text();
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(text) as Record<string, unknown>;
      } catch {
        parsed = { raw: text };
      }
      return { status: response.status, body: parsed, headers: response.headers };
    },
    async queuedCount() {
      let cursor = '0';
      let total = 0;
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*:inbox`, 'COUNT', 1000);
        cursor = next;
        for (const key of keys) total += await redis.xlen(key);
      } while (cursor !== '0');
      return total;
    },
    // BullMQ creates its queue's metadata lazily; only thread state counts as a trace of a request.
    keyCount: () => countKeys(`${prefix}:{b*`),
    metrics: () => metrics.registry.metrics(),
    async close() {
      await ingress.close();
      await deletePrefix(redis, prefix);
      redis.disconnect();
      await server.stop();
    },
  };
}

/** Headers a real Slack delivery carries for this body, signed now. */
export function slackHeaders(body: string, now = Date.now()): Record<string, string> {
  const timestamp = String(Math.floor(now / 1000));
  return {
    'x-slack-request-timestamp': timestamp,
    'x-slack-signature': slackSignature(SECRETS.SLACK_SIGNING_SECRET, timestamp, body),
  };
}

export function telegramHeaders(): Record<string, string> {
  return { 'x-telegram-bot-api-secret-token': SECRETS.TELEGRAM_SECRET_TOKEN };
}

export function discordHeaders(key: KeyObject, body: string, now = Date.now()): Record<string, string> {
  const timestamp = String(Math.floor(now / 1000));
  return {
    'x-signature-timestamp': timestamp,
    'x-signature-ed25519': sign(null, Buffer.from(timestamp + body), key).toString('hex'),
  };
}

/** Headers of a gateway event or Discord forward signed with `secret` at `now`. */
export function hmacHeaders(secret: string, body: string, now = Date.now()): Record<string, string> {
  return signedRequestHeaders(secret, body, now);
}

let counter = 0;
/** An `openab.gateway.event.v1` message body: a new message (and a new delivery) on every call. */
export function gatewayEvent(text: string, overrides: Record<string, unknown> = {}): string {
  counter++;
  return JSON.stringify({
    schema: 'openab.gateway.event.v1',
    event_id: `evt_${counter}-${Date.now()}`,
    timestamp: new Date().toISOString(),
    platform: 'telegram',
    event_type: 'message',
    channel: { id: 'dev', type: 'group', thread_id: 'T1' },
    sender: { id: 'u-ada', name: 'ada', display_name: 'Ada', is_bot: false },
    content: { type: 'text', text },
    mentions: [],
    message_id: `m-${counter}-${Date.now()}`,
    ...overrides,
  });
}

/** What `tributary discord-forwarder` posts for a guild channel message. */
export function discordForward(text: string, id = '1', channelId = '2'): string {
  return JSON.stringify({
    schema: 'tributary.discord.forwarded.v1',
    message: {
      id,
      type: 0,
      channel_id: channelId,
      author: { id: '3', username: 'ada' },
      content: text,
      timestamp: '2025-01-01T00:00:00.000000+00:00',
      mentions: [{ id: '900' }],
      attachments: [],
    },
    channel: { id: channelId, parent_id: null, type: 0 },
  });
}

/** A Slack `event_callback` for a channel message. */
export function slackMessage(text: string, fields: Record<string, unknown> = {}, type = 'message'): string {
  counter++;
  const ts = (fields.ts as string | undefined) ?? `${1_700_000_000 + counter}.000100`;
  return JSON.stringify({
    type: 'event_callback',
    team_id: 'T1',
    event_id: `Ev${counter}`,
    event_time: 1_700_000_000,
    event: { type, channel: 'C1', user: 'U1', text, ts, ...fields },
  });
}

export function telegramUpdate(
  text: string,
  updateId: number,
  messageId = updateId,
  date = Math.floor(Date.now() / 1000),
): string {
  return JSON.stringify({
    update_id: updateId,
    message: {
      message_id: messageId,
      date,
      chat: { id: -1001, type: 'supergroup', title: 'dev' },
      from: { id: 42, is_bot: false, first_name: 'Ada', username: 'ada' },
      text,
      // Telegram marks each @username it recognised; the adapter reads mentions from these.
      entities: [...text.matchAll(/@\w+/g)].map((m) => ({
        type: 'mention',
        offset: m.index,
        length: m[0].length,
      })),
    },
  });
}
