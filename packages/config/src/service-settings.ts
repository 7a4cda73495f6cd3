import { redisAddress } from '@tributary/queue/address';
import { type QueueConfig, queueDefaults } from '@tributary/queue/config';
import { ConfigError } from './config-error.js';
import {
  type Env,
  type LogLevel,
  readChoice,
  readInteger,
  readLogLevel,
  readOptional,
  readString,
  readUrl,
} from './env-readers.js';
import { loadPlatformConfig, type PlatformConfig } from './platform-config.js';

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/** Where a service listens unless told otherwise: in a container, every interface. */
export const ALL_INTERFACES = '0.0.0.0';

/** Where a worker's or forwarder's metrics and health listen unless told otherwise. */
export const DEFAULT_METRICS_PORT = 9464;

/**
 * What ingress and workers read alike: they must agree on the Redis, its key namespace and session
 * affinity (ingress's enqueue rings the preferred worker first; workers announce themselves and take
 * their own doorbells), or messages are queued where no worker looks.
 */
export interface ServiceSettings {
  /** One Redis (`redis://`) or a Redis Cluster's seed nodes (`redis-cluster://host:port,host:port`). */
  redisUrl: string;
  /** Doorbell queues (DOORBELL_QUEUES): one per Cluster primary spreads dispatch over all of them. */
  doorbellQueues: number;
  /** Namespace of every Redis key. */
  redisPrefix: string;
  sessionAffinity: boolean;
  /** Undefined: the queue's default. */
  sessionAffinityWaitMs: number | undefined;
  /** How long a thread's keys outlive its last activity while nothing is buffered (`idleTtlMs`). */
  threadIdleTtlMs: number;
  /**
   * How long dead letters and dead replies are kept, and how many of one thread and in all (each kind
   * apart): workers write and trim them, ingress's admin API lists them by the same bounds.
   */
  deadTtlMs: number;
  deadMaxPerThread: number;
  deadMax: number;
  /** Credentials and API bases: ingress verifies deliveries and reacts, workers reply. */
  platforms: PlatformConfig;
  logLevel: LogLevel;
}

export function readServiceSettings(env: Env): ServiceSettings {
  const affinityWait = readOptional(env, 'SESSION_AFFINITY_WAIT_MS');
  const affinity = readChoice(env, 'SESSION_AFFINITY', ['on', 'off'], queueDefaults.affinity ? 'on' : 'off');
  const redisUrl = readRedisUrl(env);
  return {
    redisUrl,
    // A Cluster has at least three primaries; a single Redis gains nothing from more than one queue.
    doorbellQueues: readInteger(
      env,
      'DOORBELL_QUEUES',
      isRedisCluster(redisUrl) ? 3 : queueDefaults.doorbellQueues,
      1,
      queueDefaults.buckets,
    ),
    redisPrefix: readString(env, 'REDIS_PREFIX', queueDefaults.prefix),
    sessionAffinity: affinity === 'on',
    // Below the sweeper's lost-doorbell grace (5 s), which would otherwise re-ring the thread first.
    sessionAffinityWaitMs:
      affinityWait === undefined ? undefined : readInteger(env, 'SESSION_AFFINITY_WAIT_MS', 0, 1, 4_000),
    // At least ten minutes: dedup keys live no longer than this, and must still absorb a signed
    // webhook's replay within its 300 s window and a platform's retries.
    threadIdleTtlMs: readInteger(env, 'THREAD_IDLE_TTL_MS', queueDefaults.idleTtlMs, 600_000),
    // At least an hour: an operator needs the time to look at what failed.
    deadTtlMs: readInteger(env, 'DEAD_TTL_MS', queueDefaults.deadTtlMs, 3_600_000),
    deadMaxPerThread: readInteger(env, 'DEAD_MAX_PER_THREAD', queueDefaults.deadMaxPerThread, 1),
    // At least one for each bucket: each bucket keeps its share.
    deadMax: readInteger(env, 'DEAD_MAX', queueDefaults.deadMax, queueDefaults.buckets),
    platforms: loadPlatformConfig(env),
    logLevel: readLogLevel(env),
  };
}

/** Whether a (valid) REDIS_URL names a Redis Cluster rather than one server. */
export function isRedisCluster(url: string): boolean {
  return redisAddress(url).kind === 'cluster';
}

/** REDIS_URL: one Redis (`redis:`, `rediss:`) or a Cluster's seeds (`redis-cluster:`, `rediss-cluster:`). */
function readRedisUrl(env: Env): string {
  const raw = readOptional(env, 'REDIS_URL');
  let cluster = false;
  try {
    cluster = raw !== undefined && isRedisCluster(raw);
  } catch (error) {
    throw new ConfigError('REDIS_URL', (error as Error).message);
  }
  if (cluster) return raw!;
  return readUrl(env, 'REDIS_URL', ['redis:', 'rediss:']) ?? DEFAULT_REDIS_URL;
}

/** The queue options ingress and workers share (`affinityWaitMs` only matters to workers). */
export function sharedQueueOptions(settings: ServiceSettings): Partial<QueueConfig> {
  return {
    prefix: settings.redisPrefix,
    doorbellQueues: settings.doorbellQueues,
    affinity: settings.sessionAffinity,
    idleTtlMs: settings.threadIdleTtlMs,
    deadTtlMs: settings.deadTtlMs,
    deadMaxPerThread: settings.deadMaxPerThread,
    deadMax: settings.deadMax,
    ...(settings.sessionAffinityWaitMs === undefined
      ? {}
      : { affinityWaitMs: settings.sessionAffinityWaitMs }),
  };
}
