import type { AuthMethodInfo } from './agent-info.js';

/** Base of every error this package throws, so callers can tell ACP failures from their own. */
export class AcpError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The agent command could not be started or did not complete `initialize`. */
export class AgentStartError extends AcpError {
  constructor(
    readonly command: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(`agent "${command}" did not start: ${message}`, options);
  }
}

/** The agent did not answer `initialize` (or `authenticate`) within AGENT_INIT_TIMEOUT_MS. */
export class AgentStartTimeoutError extends AgentStartError {
  constructor(
    command: string,
    readonly step: 'initialize' | 'authenticate',
    readonly timeoutMs: number,
  ) {
    super(command, `no answer to ${step} within ${timeoutMs} ms`);
  }
}

/**
 * The agent wants to be signed in and this client could not do it: it answered a request with ACP's
 * auth_required error, the configured auth method is not one it offers, or it rejected `authenticate`.
 * Retrying cannot help until its setup changes.
 */
export class AgentAuthError extends AcpError {
  constructor(
    /** The request that failed: `authenticate`, or the one the agent refused (e.g. `session/new`). */
    readonly method: string,
    /** The methods the agent offers (`authMethods` of `initialize`). */
    readonly offered: readonly AuthMethodInfo[],
    /** The method this client was told to use, if any. */
    readonly configured: string | undefined,
    /** The agent's own words, when it answered with an error. */
    readonly agentMessage: string | undefined,
    options?: ErrorOptions,
  ) {
    const offers =
      offered.length === 0
        ? 'it offers no auth methods'
        : `it offers ${offered.map((m) => `"${m.id}"`).join(', ')}`;
    const what =
      method === 'authenticate'
        ? configured !== undefined && !offered.some((m) => m.id === configured)
          ? `auth method "${configured}" is not offered`
          : `agent rejected authenticate with "${configured}"`
        : `agent requires authentication for ${method}`;
    const tried =
      method !== 'authenticate' && configured !== undefined ? ` (signed in with "${configured}")` : '';
    super(`${what}${tried}${agentMessage ? `: ${agentMessage}` : ''}; ${offers}`, options);
  }
}

/** The agent answered `initialize` with a protocol version this client does not speak, or refused all. */
export class UnsupportedProtocolVersionError extends AcpError {
  constructor(
    /** The versions this client speaks (it offered the newest). */
    readonly supported: readonly number[],
    readonly answered: number | undefined,
  ) {
    super(
      `agent answered ACP protocol version ${answered ?? '(none)'}, but this client speaks only versions ${supported.join(' and ')}`,
    );
  }
}

/** The agent process ended (exit, crash or kill); every call in flight on it fails with this. */
export class AgentExitedError extends AcpError {
  constructor(
    readonly pid: number,
    readonly code: number | null,
    readonly signal: NodeJS.Signals | null,
    /** The last lines the agent wrote to stderr, for the operator. */
    readonly stderrTail: string,
  ) {
    const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    super(`agent process ${pid} ${how}${stderrTail ? `; stderr tail:\n${stderrTail}` : ''}`);
  }
}

/** The agent answered a request with a JSON-RPC error. */
export class AgentRequestError extends AcpError {
  constructor(
    readonly method: string,
    readonly code: number,
    readonly agentMessage: string,
  ) {
    super(`agent rejected ${method}: ${agentMessage} (code ${code})`);
  }
}

/** The agent did not end a cancelled turn within the bound; its process group was killed. */
export class TurnCancelTimeoutError extends AcpError {
  constructor(
    readonly threadKey: string,
    readonly sessionId: string,
    readonly cancelTimeoutMs: number,
    options?: ErrorOptions,
  ) {
    super(
      `turn on thread ${threadKey} (session ${sessionId}) did not end within ${cancelTimeoutMs} ms of session/cancel; agent process killed`,
      options,
    );
  }
}

/**
 * The session a turn was to run on is no longer live (its agent process ended since it was attached):
 * the turn fails rather than run on a new session that lacks what the caller seeded it with.
 */
export class SessionGoneError extends AcpError {
  constructor(
    readonly threadKey: string,
    readonly sessionId: string,
  ) {
    super(`session ${sessionId} of thread ${threadKey} ended before its turn started`);
  }
}

/** A second turn was started on a thread whose turn is still running (one turn per thread, I2). */
export class TurnInProgressError extends AcpError {
  constructor(readonly threadKey: string) {
    super(`a turn is already running on thread ${threadKey}`);
  }
}

/** Every live session is busy, so none can be evicted to make room for another thread. */
export class SessionCapacityError extends AcpError {
  constructor(readonly maxSessions: number) {
    super(`all ${maxSessions} agent sessions are busy; none can be evicted`);
  }
}

/** The pool was closed; it starts no more processes or turns. */
export class PoolClosedError extends AcpError {
  constructor() {
    super('session pool is closed');
  }
}
