import { agentDefaults } from '@tributary/acp/defaults';
import {
  DEFAULT_POOL,
  DEFAULT_REPLY_RETRY,
  type ProcessingMode,
  queueDefaults,
} from '@tributary/queue/config';
import {
  type PermissionSettings,
  type ProgressDisplay,
  readPermissionSettings,
  readProgressDisplay,
  readSessionSetupSettings,
  readWorkspaceBudget,
  readWorkspaceSettings,
  type SessionSetupSettings,
  type WorkspaceSettings,
} from './agent-settings.js';
import { ConfigError } from './config-error.js';
import {
  type Env,
  readChoice,
  readInteger,
  readOptional,
  readString,
  readToken,
  splitCommandLine,
} from './env-readers.js';
import { readHeldSecrets } from './held-secrets.js';
import { PROCESSING_MODES } from './processing-modes.js';
import { isPoolName } from './routes/route-table.js';
import {
  ALL_INTERFACES,
  DEFAULT_METRICS_PORT,
  readServiceSettings,
  type ServiceSettings,
} from './service-settings.js';

export interface WorkerConfig
  extends ServiceSettings,
    PermissionSettings,
    WorkspaceSettings,
    SessionSetupSettings {
  /** Refuse to start, or only warn, when Redis could evict queued messages. */
  redisSafety: 'refuse' | 'warn';
  /**
   * Bytes a thread's workspace and agent home may take together; a turn that ends past it holds the
   * thread's next turns until they are cleaned (docs/adr/0046). 0: no budget.
   */
  agentWorkspaceBudgetBytes: number;
  /** Undefined: the built-in agent. */
  agentCommand: { command: string; args: string[] } | undefined;
  /** Variables passed to the agent on top of the allowlist, by name. */
  agentEnv: string[];
  /** The auth method each agent process is signed in with after `initialize`; undefined: none. */
  agentAuthMethod: string | undefined;
  /** Turns this worker runs at once; also its live ACP sessions cap. */
  concurrency: number;
  /** WORKER_POOL: the pool whose threads this worker serves (docs/adr/0060). */
  workerPool: string;
  /** A turn's lease on its thread, renewed every third of it; a frozen worker's thread waits this long. */
  leaseMs: number;
  /**
   * A worker whose event loop does not answer its warden this long is taken for frozen: its agents are
   * killed and its presence withdrawn, so other workers take its threads over.
   */
  stallToleranceMs: number;
  /**
   * The worker's presence key (written by its warden) expires this long after the last write: how
   * soon a worker that died with its warden is taken over, and the longest Redis outage (four fifths
   * of it) its warden rides out before it kills the worker's agents.
   */
  presenceTtlMs: number;
  maxBatchMessages: number;
  maxBatchTokens: number;
  /** The processing mode of platforms without one of their own in `processingModes`. */
  processingMode: ProcessingMode;
  /** Processing mode by platform: the part of a thread key before its first ':'. */
  processingModes: Readonly<Record<string, ProcessingMode>>;
  /**
   * Where a message that arrives while a turn runs is steered into it (docs/adr/0040), when the agent
   * advertises steering: `all` platforms, or those listed. Empty: nowhere (the default).
   */
  steering: 'all' | readonly string[];
  /** Live agent sessions a worker keeps, idle ones included (at least `concurrency`). */
  maxSessions: number;
  /** Agent processes kept started and initialized for threads that have no session yet, at least. */
  warmSpares: number;
  /** Memory (PSS, MB) the warm spares may take together as they grow past `warmSpares`; 0: never. */
  warmSparesMemoryMb: number;
  /** How long an agent may take to answer `initialize` (and `authenticate`) before its start fails. */
  agentInitTimeoutMs: number;
  /** Agent processes a worker starts at once; later starts wait in order. */
  agentStartConcurrency: number;
  /** How long a batch waits for an agent that does not start before its thread is told. */
  agentSlowStartNoticeMs: number;
  turnTimeoutMs: number;
  stallSoftMs: number;
  stallHardMs: number;
  cancelTimeoutMs: number;
  /** How long a committed reply is retried while its platform cannot be reached; then it is a dead reply. */
  replyRetryHorizonMs: number;
  /** The longest wait between two delivery attempts of a reply. */
  replyRetryMaxDelayMs: number;
  /** After SIGTERM, how long running turns may take to finish before they are cancelled and handed back. */
  shutdownGraceMs: number;
  /** Where the platform can edit, the reply streams into a placeholder edited at most this often; 0: off. */
  replyStreamIntervalMs: number;
  /** APPROVAL_TIMEOUT_MS: how long a permission request put to the thread waits for an answer. */
  approvalTimeoutMs: number;
  /** APPROVAL_FALLBACK: what answers a request nobody answered in time (docs/adr/0056). */
  approvalFallback: 'reject' | 'allow-once';
  /** Platform messages one reply may take; a longer reply is cut there, with a notice, and kept whole in history. */
  replyMaxParts: number;
  /** Largest attachment a worker downloads for a turn; larger ones reach the agent as a link and a note. */
  attachmentMaxBytes: number;
  /** Attachments a worker downloads per turn; the rest reach the agent as links and notes. */
  attachmentMaxCount: number;
  /**
   * File content one prompt carries, as it travels to the agent (base64 media, text as JSON strings);
   * the files past it reach the agent as links and notes. Below the agent connection's message limit.
   */
  attachmentMaxTurnBytes: number;
  /** Bytes of files a worker holds at once across its turns; a turn waits for its share. */
  attachmentWorkerBytes: number;
  /** All of one turn's downloads together; the files not in by then reach the agent as links and notes. */
  attachmentTimeoutMs: number;
  /** How the user sees the agent's tool calls and plan while a turn runs. */
  progress: ProgressDisplay;
  /** A running turn's 'working' reaction shows once the turn has run this long; 0: at its start. */
  workingReactionDelayMs: number;
  /** `/livez`, `/readyz`, `/metrics`; 0: any free port. */
  metricsPort: number;
  metricsHost: string;
  /** METRICS_TOKEN: the bearer token `/metrics` requires; undefined: open to whoever reaches it. */
  metricsToken: string | undefined;
  /**
   * Every credential value in the worker's environment, its own and those meant for ingress
   * (deployments hand both the one Secret): blanked from whatever its agents say.
   */
  heldSecrets: readonly string[];
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
  const settings = readServiceSettings(env);
  const metricsToken = readToken(env, 'METRICS_TOKEN');
  // Renewed every third of it: below 3 s one slow Redis round trip could cost a live turn its lease.
  const leaseMs = readInteger(env, 'LEASE_MS', queueDefaults.leaseMs, 3_000, 3_600_000);
  const stallToleranceMs = readInteger(env, 'WORKER_STALL_TOLERANCE_MS', 5_000, 1_000, 600_000);
  const presenceTtlMs = readInteger(env, 'WORKER_PRESENCE_TTL_MS', 4_000, 1_000, 60_000);
  // An expired lease is revived whoever holds it: a frozen worker's agents must be dead before then.
  if (stallToleranceMs >= (leaseMs * 2) / 3) {
    throw new ConfigError(
      'WORKER_STALL_TOLERANCE_MS',
      `must be below two thirds of LEASE_MS (${leaseMs}), so a frozen worker's agents are killed before its leases can expire`,
    );
  }
  const concurrency = readInteger(env, 'WORKER_CONCURRENCY', 4, 1, 256);
  const workerPool = readString(env, 'WORKER_POOL', DEFAULT_POOL);
  if (!isPoolName(workerPool)) {
    throw new ConfigError(
      'WORKER_POOL',
      `must be 1-40 of a-z, 0-9 and -, starting with a letter; got "${workerPool}"`,
    );
  }
  // Idle sessions are what session affinity reuses, so a worker keeps more than it runs at once; each
  // one is an agent process of its own (docs/adr/0015), which bounds how many.
  const maxSessions = readInteger(
    env,
    'AGENT_MAX_SESSIONS',
    Math.max(agentDefaults.maxSessions, concurrency),
    concurrency,
  );
  return Object.freeze({
    ...readAttachmentLimits(env),
    ...settings,
    redisSafety: readChoice(env, 'REDIS_SAFETY', ['refuse', 'warn'], 'refuse'),
    agentCommand: words && { command: words[0]!, args: words.slice(1) },
    ...readWorkspaceSettings(env, cwd),
    ...readWorkspaceBudget(env),
    agentEnv: (readOptional(env, 'AGENT_ENV') ?? '').split(',').filter(Boolean),
    agentAuthMethod: readOptional(env, 'AGENT_AUTH_METHOD')?.trim() || undefined,
    ...readPermissionSettings(env),
    ...readSessionSetupSettings(env),
    concurrency,
    workerPool,
    leaseMs,
    stallToleranceMs,
    presenceTtlMs,
    maxSessions,
    warmSpares: readInteger(env, 'AGENT_WARM_SPARES', agentDefaults.warmSpares, 0, 64),
    warmSparesMemoryMb: readInteger(
      env,
      'AGENT_WARM_SPARES_MEMORY_MB',
      agentDefaults.warmSparesMemoryMb,
      0,
      1_048_576,
    ),
    agentInitTimeoutMs: readInteger(
      env,
      'AGENT_INIT_TIMEOUT_MS',
      agentDefaults.initializeTimeoutMs,
      1_000,
      600_000,
    ),
    agentStartConcurrency: readInteger(
      env,
      'AGENT_START_CONCURRENCY',
      agentDefaults.startConcurrency(),
      1,
      256,
    ),
    agentSlowStartNoticeMs: readInteger(env, 'AGENT_SLOW_START_NOTICE_MS', 30_000, 0, 3_600_000),
    maxBatchMessages: readInteger(env, 'MAX_BATCH_MESSAGES', queueDefaults.maxBatchMessages),
    maxBatchTokens: readInteger(env, 'MAX_BATCH_TOKENS', queueDefaults.maxBatchTokens),
    processingMode: readChoice(env, 'MESSAGE_PROCESSING_MODE', PROCESSING_MODES, 'per-thread'),
    processingModes: readProcessingModes(env),
    steering: readSteering(env),
    turnTimeoutMs: readInteger(env, 'TURN_TIMEOUT_MS', 600_000),
    stallSoftMs,
    stallHardMs,
    cancelTimeoutMs: readInteger(env, 'CANCEL_TIMEOUT_MS', agentDefaults.cancelTimeoutMs),
    replyRetryHorizonMs: readInteger(env, 'REPLY_RETRY_HORIZON_MS', DEFAULT_REPLY_RETRY.horizonMs),
    replyRetryMaxDelayMs: readInteger(env, 'REPLY_RETRY_MAX_DELAY_MS', DEFAULT_REPLY_RETRY.maxDelayMs),
    shutdownGraceMs: readInteger(env, 'SHUTDOWN_GRACE_MS', 30_000, 0),
    replyStreamIntervalMs: readInteger(env, 'REPLY_STREAM_INTERVAL_MS', 1_500, 0),
    approvalTimeoutMs: readInteger(env, 'APPROVAL_TIMEOUT_MS', 300_000, 1_000),
    approvalFallback: readChoice(env, 'APPROVAL_FALLBACK', ['reject', 'allow-once'], 'reject'),
    replyMaxParts: readInteger(env, 'REPLY_MAX_PARTS', 10, 1, 1_000),
    progress: readProgressDisplay(env),
    workingReactionDelayMs: readInteger(env, 'WORKING_REACTION_DELAY_MS', 1_000, 0, 600_000),
    metricsPort: readInteger(env, 'METRICS_PORT', DEFAULT_METRICS_PORT, 0, 65_535),
    metricsHost: readString(env, 'METRICS_HOST', ALL_INTERFACES),
    metricsToken,
    heldSecrets: Object.freeze(readHeldSecrets(env, { ...settings, metricsToken })),
  });
}

const MiB = 1024 * 1024;
/**
 * A prompt is one line of the agent connection: agents built on the ACP SDK refuse a line over 32 MiB
 * (its ndJsonStream's default) by closing the connection, so the files' share stays below it, leaving
 * room for the messages' text and a fresh session's history.
 */
const MAX_TURN_BYTES_LIMIT = 30 * MiB;

type AttachmentLimits = Pick<
  WorkerConfig,
  | 'attachmentMaxBytes'
  | 'attachmentMaxCount'
  | 'attachmentMaxTurnBytes'
  | 'attachmentWorkerBytes'
  | 'attachmentTimeoutMs'
>;

function readAttachmentLimits(env: Env): AttachmentLimits {
  const attachmentMaxTurnBytes = readInteger(
    env,
    'ATTACHMENT_MAX_TURN_BYTES',
    24 * MiB,
    1,
    MAX_TURN_BYTES_LIMIT,
  );
  const attachmentWorkerBytes = readInteger(env, 'ATTACHMENT_WORKER_BYTES', 64 * MiB, 1);
  if (attachmentWorkerBytes < attachmentMaxTurnBytes) {
    throw new ConfigError(
      'ATTACHMENT_WORKER_BYTES',
      `must be at least ATTACHMENT_MAX_TURN_BYTES (${attachmentMaxTurnBytes}), or a turn could never hold its files`,
    );
  }
  return {
    attachmentMaxBytes: readInteger(env, 'ATTACHMENT_MAX_BYTES', 10 * MiB, 1),
    attachmentMaxCount: readInteger(env, 'ATTACHMENT_MAX_COUNT', 10, 0),
    attachmentMaxTurnBytes,
    attachmentWorkerBytes,
    attachmentTimeoutMs: readInteger(env, 'ATTACHMENT_TIMEOUT_MS', 30_000, 1),
  };
}

/** `MESSAGE_PROCESSING_MODES`: comma-separated `platform=mode` pairs, e.g. `slack=per-lane,telegram=per-message`. */
function readProcessingModes(env: Env): Readonly<Record<string, ProcessingMode>> {
  const name = 'MESSAGE_PROCESSING_MODES';
  const modes: Record<string, ProcessingMode> = {};
  for (const pair of (readOptional(env, name) ?? '').split(',')) {
    if (pair.trim() === '') continue;
    const match = /^\s*([a-z0-9_-]+)\s*=\s*([a-z-]+)\s*$/.exec(pair);
    if (!match) throw new ConfigError(name, `expected platform=mode pairs, got ${JSON.stringify(pair)}`);
    const [, platform, mode] = match;
    if (!(PROCESSING_MODES as readonly string[]).includes(mode!)) {
      throw new ConfigError(
        name,
        `mode of ${platform} must be one of ${PROCESSING_MODES.join(', ')}, got ${JSON.stringify(mode)}`,
      );
    }
    if (Object.hasOwn(modes, platform!)) throw new ConfigError(name, `${platform} is given twice`);
    modes[platform!] = mode as ProcessingMode;
  }
  return Object.freeze(modes);
}

/** `STEERING`: `off` (default), `on` (every platform) or the platforms that steer, e.g. `slack,telegram`. */
function readSteering(env: Env): 'all' | readonly string[] {
  const name = 'STEERING';
  const value = (readOptional(env, name) ?? 'off').trim();
  if (value === 'off') return [];
  if (value === 'on') return 'all';
  const platforms = value.split(',').map((platform) => platform.trim());
  for (const platform of platforms) {
    if (!/^[a-z0-9_-]+$/.test(platform)) {
      throw new ConfigError(name, `expected off, on or a list of platforms, got ${JSON.stringify(value)}`);
    }
  }
  return Object.freeze([...new Set(platforms)]);
}

/** Whether a thread's turns take steers: its platform's (the key's part before the first ':') setting. */
export function steersOn(config: Pick<WorkerConfig, 'steering'>, thread: string): boolean {
  if (config.steering === 'all') return true;
  const colon = thread.indexOf(':');
  return colon > 0 && config.steering.includes(thread.slice(0, colon));
}

/** The processing mode of a thread: its platform's (the key's part before the first ':'), else the default. */
export function processingModeOf(
  config: Pick<WorkerConfig, 'processingMode' | 'processingModes'>,
  thread: string,
): ProcessingMode {
  const colon = thread.indexOf(':');
  const platform = colon < 0 ? undefined : thread.slice(0, colon);
  return (
    (platform !== undefined && Object.hasOwn(config.processingModes, platform)
      ? config.processingModes[platform]
      : undefined) ?? config.processingMode
  );
}
