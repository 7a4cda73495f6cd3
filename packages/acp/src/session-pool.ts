import type {
  ContentBlock,
  Implementation,
  RequestPermissionRequest,
  RequestPermissionResponse,
  SessionNotification,
} from '@agentclientprotocol/sdk';
import { type LogSink, silentLogger } from '@tributary/observability';
import type { AgentInfo } from './agent-info.js';
import { type AgentCommandConfig, AgentProcess } from './agent-process.js';
import { AgentSupervisor } from './agent-supervisor.js';
import { AgentRequestError, PoolClosedError, TurnInProgressError } from './errors.js';
import { choosePermission, DEFAULT_PERMISSION_POLICY, type PermissionPolicy } from './permission-policy.js';
import { type PooledSession, SessionRegistry } from './session-registry.js';
import { ActiveTurn, driveTurn, type TurnOptions, type TurnResult } from './turn.js';
import { type TurnEvent, toTurnEvent } from './turn-events.js';

/** How a thread got its session: already held, or via session/resume, session/load or session/new. */
export type SessionPath = 'live' | 'resumed' | 'loaded' | 'new';

export interface OpenedSession {
  sessionId: string;
  path: SessionPath;
}

/** An update that arrived for a session with no turn running (e.g. after the turn was answered). */
export interface LateUpdate {
  threadKey: string;
  sessionId: string;
  event: TurnEvent;
}

export interface SessionPoolOptions {
  agent: AgentCommandConfig;
  /** Absolute working directory of the agent process and of every session. */
  cwd: string;
  /** Called for each agent process started after the first (the previous one exited or was killed). */
  onAgentRestart?: () => void;
  /** Live sessions kept per pool; idle ones are evicted least recently used first. Default 8. */
  maxSessions?: number;
  /** How long a cancelled turn may take to end before the process group is killed. Default 5 s. */
  cancelTimeoutMs?: number;
  killGraceMs?: number;
  initializeTimeoutMs?: number;
  permissionPolicy?: PermissionPolicy;
  clientInfo?: Implementation;
  logger?: LogSink;
  /** Receives late updates; without it they are dropped with a debug record. */
  onLateUpdate?: (update: LateUpdate) => void;
}

type SessionOpener = (agent: AgentProcess) => Promise<OpenedSession>;

interface Attached {
  session: PooledSession;
  path: SessionPath;
}

/** The session's turn while it still owns the session's updates (not yet answered). */
function runningTurn(session: PooledSession): ActiveTurn | undefined {
  return session.turn && !session.turn.answered ? session.turn : undefined;
}

/**
 * The ACP sessions of one worker: one agent process carrying one session per thread key. A dead
 * process takes its sessions with it; the next call starts a fresh one.
 */
export class SessionPool {
  readonly #options: SessionPoolOptions;
  readonly #logger: LogSink;
  readonly #sessions: SessionRegistry;
  readonly #opening = new Map<string, Promise<Attached>>();
  readonly #agents: AgentSupervisor;
  readonly #newSession: SessionOpener = async (agent) => ({
    sessionId: await agent.newSession(this.#options.cwd),
    path: 'new',
  });

  constructor(options: SessionPoolOptions) {
    this.#options = options;
    this.#logger = options.logger ?? silentLogger;
    this.#sessions = new SessionRegistry(Math.max(1, options.maxSessions ?? 8));
    let started = 0;
    this.#agents = new AgentSupervisor(
      () => {
        if (started++ > 0) options.onAgentRestart?.();
        return AgentProcess.start({
          ...options.agent,
          cwd: options.cwd,
          clientInfo: options.clientInfo,
          killGraceMs: options.killGraceMs,
          initializeTimeoutMs: options.initializeTimeoutMs,
          logger: this.#logger,
          onSessionUpdate: (notification, from) => this.#route(notification, from),
          onPermissionRequest: (request, from) => this.#answerPermission(request, from),
        });
      },
      (agent) => this.#sessions.forgetAgent(agent),
    );
  }

  /** The agent's answer to `initialize`; starts the agent process if none runs. */
  async agentInfo(): Promise<AgentInfo> {
    return (await this.#agents.get()).info;
  }

  /** Pid of the running agent process, if any. */
  get agentPid(): number | undefined {
    return this.#agents.current?.pid;
  }

  /** Sessions open on the running agent process. */
  get liveSessions(): number {
    return this.#sessions.liveCount;
  }

  has(threadKey: string): boolean {
    return this.#sessions.get(threadKey) !== undefined;
  }

  sessionIdOf(threadKey: string): string | undefined {
    return this.#sessions.get(threadKey)?.sessionId;
  }

  /** The thread's session, created with session/new when it has none. */
  async open(threadKey: string): Promise<OpenedSession> {
    const { session, path } = await this.#open(threadKey, this.#newSession);
    return { sessionId: session.sessionId, path };
  }

  /**
   * Reattaches a thread to a session persisted earlier: session/resume if advertised, else
   * session/load (its replay is not delivered anywhere), else a new session. The returned path tells
   * the caller whether it must seed the history itself (`new`).
   */
  async loadOrResume(threadKey: string, sessionId: string): Promise<OpenedSession> {
    const live = this.#sessions.get(threadKey);
    if (live && live.sessionId !== sessionId) await this.release(threadKey);
    const { session, path } = await this.#open(threadKey, async (agent) => {
      const { cwd } = this.#options;
      const { supports } = agent.info;
      if (
        supports.resume &&
        (await this.#attempt(threadKey, 'resume', () => agent.resumeSession(sessionId, cwd)))
      ) {
        return { sessionId, path: 'resumed' };
      }
      // The load's replay arrives before the session is attached to the thread, so #route drops it.
      if (
        supports.loadSession &&
        (await this.#attempt(threadKey, 'load', () => agent.loadSession(sessionId, cwd)))
      ) {
        return { sessionId, path: 'loaded' };
      }
      return this.#newSession(agent);
    });
    return { sessionId: session.sessionId, path };
  }

  /** Runs one prompt turn on the thread's session (opened with session/new if the thread has none). */
  async runTurn(threadKey: string, blocks: ContentBlock[], options: TurnOptions = {}): Promise<TurnResult> {
    const { session } = await this.#open(threadKey, this.#newSession);
    if (session.turn) throw new TurnInProgressError(threadKey);
    if (options.signal?.aborted) return { stopReason: 'cancelled', text: '', sessionId: session.sessionId };
    const turn = new ActiveTurn(options.onUpdate, this.#logger);
    session.turn = turn;
    this.#sessions.touch(session);
    try {
      return await driveTurn({
        agent: session.agent,
        threadKey,
        sessionId: session.sessionId,
        blocks,
        turn,
        signal: options.signal,
        cancelTimeoutMs: this.#options.cancelTimeoutMs ?? 5_000,
        logger: this.#logger,
      });
    } finally {
      session.turn = undefined;
      this.#sessions.touch(session);
    }
  }

  /** Forgets the thread's session and closes it in the agent (e.g. when the worker loses the thread). */
  async release(threadKey: string): Promise<void> {
    const session = this.#sessions.take(threadKey);
    if (session) await this.#closeSession(session, 'released');
  }

  /** Kills the agent process group; the pool refuses further work. */
  async close(): Promise<void> {
    this.#sessions.clear();
    await this.#agents.close();
  }

  async #open(threadKey: string, opener: SessionOpener): Promise<Attached> {
    if (this.#agents.closed) throw new PoolClosedError();
    const live = this.#sessions.get(threadKey);
    if (live) {
      this.#sessions.touch(live);
      return { session: live, path: 'live' };
    }
    const pending = this.#opening.get(threadKey);
    if (pending) return pending;
    const opening = this.#create(threadKey, opener);
    this.#opening.set(threadKey, opening);
    try {
      return await opening;
    } finally {
      this.#opening.delete(threadKey);
    }
  }

  async #create(threadKey: string, opener: SessionOpener): Promise<Attached> {
    const evicted = this.#sessions.evictFor(this.#opening.size);
    await Promise.all(evicted.map((session) => this.#closeSession(session, 'evicted')));
    const agent = await this.#agents.get();
    const { sessionId, path } = await opener(agent);
    const session = this.#sessions.add(threadKey, sessionId, agent);
    this.#logger.info({ threadKey, sessionId, path, pid: agent.pid }, 'session opened');
    return { session, path };
  }

  async #closeSession(session: PooledSession, reason: 'evicted' | 'released'): Promise<void> {
    const { agent, threadKey, sessionId } = session;
    this.#logger.info({ threadKey, sessionId, reason }, 'session dropped');
    if (!agent.alive) return;
    try {
      if (agent.info.supports.close) await agent.closeSession(sessionId);
      else if (session.turn) await agent.cancel(sessionId);
    } catch (error) {
      this.#logger.warn({ threadKey, sessionId, err: error }, 'session/close failed');
    }
  }

  /** Runs a continuity step; the agent refusing it (unknown session...) means "try the next path". */
  async #attempt(threadKey: string, step: string, call: () => Promise<void>): Promise<boolean> {
    try {
      await call();
      return true;
    } catch (error) {
      if (!(error instanceof AgentRequestError)) throw error;
      this.#logger.info(
        { threadKey, step, code: error.code, reason: error.agentMessage },
        'session continuity step refused',
      );
      return false;
    }
  }

  #route({ sessionId, update }: SessionNotification, agent: AgentProcess): void {
    const session = this.#sessions.find(agent, sessionId);
    if (!session) {
      this.#logger.debug(
        { sessionId, update: update.sessionUpdate },
        'update for a session no thread holds dropped',
      );
      return;
    }
    const event = toTurnEvent(update);
    const turn = runningTurn(session);
    if (turn) {
      turn.deliver(event);
      return;
    }
    const { threadKey } = session;
    if (!this.#options.onLateUpdate) {
      this.#logger.debug({ threadKey, sessionId, kind: event.kind }, 'late update dropped');
      return;
    }
    try {
      this.#options.onLateUpdate({ threadKey, sessionId, event });
    } catch (error) {
      this.#logger.warn({ threadKey, sessionId, err: error }, 'late update listener threw');
    }
  }

  #answerPermission(request: RequestPermissionRequest, agent: AgentProcess): RequestPermissionResponse {
    const session = this.#sessions.find(agent, request.sessionId);
    const turn = session && runningTurn(session);
    const policy = this.#options.permissionPolicy ?? DEFAULT_PERMISSION_POLICY;
    // Outside a running turn nobody owns the decision, so the request is cancelled.
    const outcome = turn
      ? choosePermission(policy, request.options, turn.cancelling)
      : { outcome: 'cancelled' as const };
    this.#logger.info(
      {
        threadKey: session?.threadKey,
        sessionId: request.sessionId,
        policy,
        outcome,
        tool: request.toolCall.title,
      },
      'permission request answered',
    );
    turn?.deliver({ kind: 'permission', request, outcome });
    return { outcome };
  }
}
