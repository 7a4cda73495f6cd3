import { DEFAULT_PERMISSION_POLICY, PERMISSION_POLICIES, type PermissionPolicy } from '@tributary/acp';
import { ConfigError } from './config-error.js';
import {
  type Env,
  readChoice,
  readInteger,
  readOptional,
  readString,
  readUrl,
  splitCommandLine,
} from './env-readers.js';

export type ProcessingMode = 'per-thread' | 'per-lane' | 'per-message';

export interface WorkerConfig {
  redisUrl: string;
  /** Namespace of every Redis key. */
  redisPrefix: string;
  /** Refuse to start, or only warn, when Redis could evict queued messages. */
  redisSafety: 'refuse' | 'warn';
  /** Undefined: the built-in agent. */
  agentCommand: { command: string; args: string[] } | undefined;
  agentCwd: string;
  /** Variables passed to the agent on top of the allowlist, by name. */
  agentEnv: string[];
  permissionPolicy: PermissionPolicy;
  /** Turns this worker runs at once; also its live ACP sessions cap. */
  concurrency: number;
  maxBatchMessages: number;
  maxBatchTokens: number;
  processingMode: ProcessingMode;
  turnTimeoutMs: number;
  stallSoftMs: number;
  stallHardMs: number;
  cancelTimeoutMs: number;
  gatewayReplyUrl: string | undefined;
  gatewaySecret: string | undefined;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
}

/**
 * The worker's configuration from environment variables: defaults declared here once, every value
 * validated, the result frozen. Throws ConfigError naming the first bad variable.
 */
export function loadWorkerConfig(env: Env, cwd: string = process.cwd()): Readonly<WorkerConfig> {
  const agentLine = readOptional(env, 'AGENT_COMMAND');
  const words = agentLine === undefined ? undefined : splitCommandLine('AGENT_COMMAND', agentLine);
  const stallSoftMs = readInteger(env, 'STALL_SOFT_MS', 10_000);
  const stallHardMs = readInteger(env, 'STALL_HARD_MS', 30_000);
  if (stallHardMs <= stallSoftMs)
    throw new ConfigError('STALL_HARD_MS', 'must be greater than STALL_SOFT_MS');
  const redisUrl = readUrl(env, 'REDIS_URL', ['redis:', 'rediss:']) ?? 'redis://127.0.0.1:6379';
  return Object.freeze({
    redisUrl,
    redisPrefix: readString(env, 'REDIS_PREFIX', 'trib'),
    redisSafety: readChoice(env, 'REDIS_SAFETY', ['refuse', 'warn'], 'refuse'),
    agentCommand: words && { command: words[0]!, args: words.slice(1) },
    agentCwd: readString(env, 'AGENT_CWD', cwd),
    agentEnv: (readOptional(env, 'AGENT_ENV') ?? '').split(',').filter(Boolean),
    permissionPolicy: readChoice(
      env,
      'AGENT_PERMISSION_POLICY',
      PERMISSION_POLICIES,
      DEFAULT_PERMISSION_POLICY,
    ),
    concurrency: readInteger(env, 'WORKER_CONCURRENCY', 4, 1, 256),
    maxBatchMessages: readInteger(env, 'MAX_BATCH_MESSAGES', 10),
    maxBatchTokens: readInteger(env, 'MAX_BATCH_TOKENS', 24_000),
    processingMode: readChoice(
      env,
      'MESSAGE_PROCESSING_MODE',
      ['per-thread', 'per-lane', 'per-message'],
      'per-thread',
    ),
    turnTimeoutMs: readInteger(env, 'TURN_TIMEOUT_MS', 600_000),
    stallSoftMs,
    stallHardMs,
    cancelTimeoutMs: readInteger(env, 'CANCEL_TIMEOUT_MS', 5_000),
    gatewayReplyUrl: readUrl(env, 'GATEWAY_REPLY_URL', ['http:', 'https:']),
    gatewaySecret: readOptional(env, 'GATEWAY_SECRET'),
    logLevel: readChoice(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace'], 'info'),
  });
}
