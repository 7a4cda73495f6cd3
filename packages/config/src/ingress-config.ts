import { isIP } from 'node:net';
import { TELEGRAM_MAX_AGE_MS } from '@tributary/platforms/defaults';
import { type QueueConfig, queueDefaults } from '@tributary/queue/config';
import { type AdminSettings, readAdminSettings } from './admin-config.js';
import { approverProblem } from './approvers.js';
import { ConfigError } from './config-error.js';
import { type Env, readChoice, readInteger, readOptional, readString, readToken } from './env-readers.js';
import { ALL_INTERFACES, readServiceSettings, type ServiceSettings } from './service-settings.js';

export const DEFAULT_INGRESS_PORT = 8080;

export type BotMessagePolicy = 'off' | 'mentions' | 'all';
export type UserMessagePolicy = 'involved' | 'mentions' | 'multibot-mentions';

/** Who may start a turn; applied at ingest, before anything is queued. */
export interface GateConfig {
  allowBotMessages: BotMessagePolicy;
  /** Bots admitted when bot messages are allowed; empty: any bot. */
  trustedBotIds: string[];
  allowUserMessages: UserMessagePolicy;
  /** Empty: every channel. */
  allowedChannels: string[];
  /** Empty: every user. */
  allowedUsers: string[];
  /** Consecutive bot messages accepted in a thread before a human must speak again (loop guard). */
  maxBotTurns: number;
}

export interface IngressConfig extends ServiceSettings, AdminSettings {
  /**
   * APPROVERS: who may answer any permission request besides the thread's starter, as
   * `<platform>:<user id>` (`slack:U123`, `telegram:42`); where the click carries roles,
   * `<platform>:role:<role id>` (`discord:role:123`); where the platform keeps groups,
   * `<platform>:group:<group id>` (a Slack user group `slack:group:S123`, or `telegram:group:admins`
   * for the administrators of the request's chat).
   */
  approvers: string[];
  /** ROUTES_FILE: the route table (docs/adr/0058); unset: every thread takes the default route. */
  routesFile: string | undefined;
  /** ROUTES_RELOAD_MS: how often the route file is read again for a change. */
  routesReloadMs: number;
  port: number;
  host: string;
  /**
   * A Redis command slower than this fails the request with 503. A message takes a few commands in
   * sequence, so keep this well under a third of the tightest platform deadline (Slack: 3 s).
   */
  redisTimeoutMs: number;
  bodyLimitBytes: number;
  /**
   * Per route and minute: verified messages and commands per conversation, and failed verifications
   * per client address (docs/adr/0013).
   */
  rateLimitPerMinute: number;
  /** Which proxies' `X-Forwarded-For` names the client address; Fastify's `trustProxy`. */
  trustProxy: TrustProxy;
  /** Messages a thread may hold (in flight plus waiting) before new ones are refused with 429. */
  maxThreadBacklog: number;
  /**
   * Replicas that must confirm a message (WAIT) before it is acknowledged: `auto` (one whenever the
   * thread's primary has a replica online), a count, or 0 (none: a failover may lose the last
   * acknowledged writes; docs/adr/0035). Slower than `ackReplicasTimeoutMs`: 503, the platform retries.
   */
  ackReplicas: QueueConfig['ackReplicas'];
  /** Below `redisTimeoutMs`, or the client would time the WAIT out before Redis answers it. */
  ackReplicasTimeoutMs: number;
  gates: GateConfig;
  /** A Telegram message (or edit) older than this by its own date is ignored: a replay, not a retry. */
  telegramMaxAgeMs: number;
  /** Bearer token `/metrics` (on the admin listener) requires; open when undefined. */
  metricsToken: string | undefined;
}

/**
 * `false`: the socket's peer is the client. `true`: every hop is trusted (the leftmost address wins).
 * A number: that many hops nearest ingress are trusted. A list: the proxies at these addresses or CIDR
 * ranges (or proxy-addr's names `loopback`, `linklocal`, `uniquelocal`) are trusted.
 */
export type TrustProxy = boolean | number | string[];

const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function isProxyRange(entry: string): boolean {
  if (PROXY_RANGE_NAMES.has(entry)) return true;
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

function readTrustProxy(env: Env): TrustProxy {
  const raw = readString(env, 'TRUST_PROXY', 'off');
  if (raw === 'off') return false;
  if (raw === 'on') return true;
  if (/^\d+$/.test(raw)) return readInteger(env, 'TRUST_PROXY', 0, 1, 32);
  const entries = raw.split(',').map((entry) => entry.trim());
  const bad = entries.find((entry) => !isProxyRange(entry));
  if (bad !== undefined) {
    throw new ConfigError(
      'TRUST_PROXY',
      `must be off, on, a hop count or comma-separated addresses/CIDRs, got ${JSON.stringify(bad)}`,
    );
  }
  return entries;
}

function readList(env: Env, name: string): string[] {
  return (readOptional(env, name) ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

/** APPROVERS, with a group refused where the platform keeps none that a click could be checked against. */
function readApprovers(env: Env): string[] {
  const approvers = readList(env, 'APPROVERS');
  for (const entry of approvers) {
    const problem = approverProblem(entry);
    if (problem !== undefined) throw new ConfigError('APPROVERS', problem);
  }
  return approvers;
}

/** `REDIS_ACK_REPLICAS`: `auto` (the default) or a count of replicas, 0 to opt out. */
function readAckReplicas(env: Env): QueueConfig['ackReplicas'] {
  return readString(env, 'REDIS_ACK_REPLICAS', 'auto') === 'auto'
    ? 'auto'
    : readInteger(env, 'REDIS_ACK_REPLICAS', 0, 0, 5);
}

/** Ingress configuration from environment variables; throws ConfigError naming the first bad one. */
export function loadIngressConfig(env: Env): Readonly<IngressConfig> {
  const settings = readServiceSettings(env);
  const redisTimeoutMs = readInteger(env, 'REDIS_TIMEOUT_MS', 1_000, 50, 2_500);
  const ackReplicasTimeoutMs = readInteger(
    env,
    'REDIS_ACK_TIMEOUT_MS',
    queueDefaults.ackReplicasTimeoutMs,
    1,
    2_500,
  );
  if (ackReplicasTimeoutMs >= redisTimeoutMs) {
    throw new ConfigError(
      'REDIS_ACK_TIMEOUT_MS',
      `must be less than REDIS_TIMEOUT_MS (${redisTimeoutMs}), or every wait for a replica times out as an unanswered command`,
    );
  }
  return Object.freeze({
    ...settings,
    port: readInteger(env, 'PORT', DEFAULT_INGRESS_PORT, 0, 65_535),
    host: readString(env, 'HOST', ALL_INTERFACES),
    redisTimeoutMs,
    bodyLimitBytes: readInteger(env, 'BODY_LIMIT_BYTES', 1_048_576, 1_024),
    rateLimitPerMinute: readInteger(env, 'RATE_LIMIT_PER_MINUTE', 1_200),
    trustProxy: readTrustProxy(env),
    maxThreadBacklog: readInteger(env, 'MAX_THREAD_BACKLOG', queueDefaults.maxBacklog),
    ackReplicas: readAckReplicas(env),
    ackReplicasTimeoutMs,
    gates: Object.freeze({
      allowBotMessages: readChoice(env, 'ALLOW_BOT_MESSAGES', ['off', 'mentions', 'all'], 'off'),
      trustedBotIds: readList(env, 'TRUSTED_BOT_IDS'),
      allowUserMessages: readChoice(
        env,
        'ALLOW_USER_MESSAGES',
        ['involved', 'mentions', 'multibot-mentions'],
        'involved',
      ),
      allowedChannels: readList(env, 'ALLOWED_CHANNELS'),
      allowedUsers: readList(env, 'ALLOWED_USERS'),
      maxBotTurns: readInteger(env, 'MAX_BOT_TURNS', 10),
    }),
    ...readAdminSettings(env),
    approvers: readApprovers(env),
    routesFile: readOptional(env, 'ROUTES_FILE'),
    routesReloadMs: readInteger(env, 'ROUTES_RELOAD_MS', 5_000, 200, 3_600_000),
    telegramMaxAgeMs: readInteger(env, 'TELEGRAM_MAX_AGE_MS', TELEGRAM_MAX_AGE_MS, 60_000),
    metricsToken: readToken(env, 'METRICS_TOKEN'),
  });
}
