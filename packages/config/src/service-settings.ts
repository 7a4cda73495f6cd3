import { type QueueConfig, queueDefaults } from '@tributary/queue/config';
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

/**
 * What ingress and workers read alike: they must agree on the Redis, its key namespace and session
 * affinity (ingress's enqueue rings the preferred worker first; workers announce themselves and take
 * their own doorbells), or messages are queued where no worker looks.
 */
export interface ServiceSettings {
  redisUrl: string;
  /** Namespace of every Redis key. */
  redisPrefix: string;
  sessionAffinity: boolean;
  /** Undefined: the queue's default. */
  sessionAffinityWaitMs: number | undefined;
  /** How long a thread's keys outlive its last activity while nothing is buffered (`idleTtlMs`). */
  threadIdleTtlMs: number;
  /** Credentials and API bases: ingress verifies deliveries and reacts, workers reply. */
  platforms: PlatformConfig;
  logLevel: LogLevel;
}

export function readServiceSettings(env: Env): ServiceSettings {
  const affinityWait = readOptional(env, 'SESSION_AFFINITY_WAIT_MS');
  const affinity = readChoice(env, 'SESSION_AFFINITY', ['on', 'off'], queueDefaults.affinity ? 'on' : 'off');
  return {
    redisUrl: readUrl(env, 'REDIS_URL', ['redis:', 'rediss:']) ?? DEFAULT_REDIS_URL,
    redisPrefix: readString(env, 'REDIS_PREFIX', queueDefaults.prefix),
    sessionAffinity: affinity === 'on',
    sessionAffinityWaitMs:
      affinityWait === undefined ? undefined : readInteger(env, 'SESSION_AFFINITY_WAIT_MS', 0),
    // At least a minute: below that a conversation's pause would lose its session and history.
    threadIdleTtlMs: readInteger(env, 'THREAD_IDLE_TTL_MS', queueDefaults.idleTtlMs, 60_000),
    platforms: loadPlatformConfig(env),
    logLevel: readLogLevel(env),
  };
}

/** The queue options ingress and workers must agree on, from the settings they share. */
export function sharedQueueOptions(settings: ServiceSettings): Partial<QueueConfig> {
  return {
    prefix: settings.redisPrefix,
    affinity: settings.sessionAffinity,
    idleTtlMs: settings.threadIdleTtlMs,
    ...(settings.sessionAffinityWaitMs === undefined
      ? {}
      : { affinityWaitMs: settings.sessionAffinityWaitMs }),
  };
}
