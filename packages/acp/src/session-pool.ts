import type { ContentBlock, Cost, Implementation, McpServer } from '@agentclientprotocol/sdk';
import { type LogSink, silentLogger } from '@tributary/observability';
import { agentDefaults } from './agent-defaults.js';
import type { AgentInfo } from './agent-info.js';
import { type AgentCommandConfig, AgentProcess, type ProcessWatcher } from './agent-process.js';
import { type AgentEnded, AgentSupervisor, type StartFailures } from './agent-supervisor.js';
import { AgentRequestError, PoolClosedError, SessionGoneError, TurnInProgressError } from './errors.js';
import type { AgentLauncher } from './launch/launched-agent.js';
import { localLauncher } from './launch/local-launcher.js';
import type { SessionSetup } from './protocol.js';
import type { AgentRooms } from './sandbox/agent-rooms.js';
import { type AgentRoom, type AgentSandbox, noSandbox } from './sandbox/agent-sandbox.js';
import { applyConfiguredMode } from './session-mode.js';
import { type PooledSession, SessionRegistry } from './session-registry.js';
import { SessionRouter, type SessionRouterOptions } from './session-router.js';
import type { SteerOutcome } from './steering.js';
import { ActiveTurn, driveTurn, type TurnOptions, type TurnResult } from './turn.js';
import { costOfTurn } from './turn-usage.js';
import { WarmSpares } from './warm-spares.js';

/** How a thread got its session: already held, or via session/resume, session/load or session/new. */
export type SessionPath = 'live' | 'resumed' | 'loaded' | 'new';

export interface OpenedSession {
  sessionId: string;
  path: SessionPath;
}

export interface SessionPoolOptions extends SessionRouterOptions {
  agent: AgentCommandConfig;
  /** Absolute working directory of every agent process and session when there are no `rooms`. */
  cwd: string;
  /** The files of each thread, and of each warm spare until a thread takes it. Default: `cwd` for all. */
  rooms?: AgentRooms;
  /** How each agent process is isolated (docs/adr/0044). Default none. */
  sandbox?: AgentSandbox;
  /** Starts the agent processes. Default: children of this process, in `sandbox`. */
  launcher?: AgentLauncher;
  /**
   * Called for each agent process that ended without the pool retiring it (a crash, an exit of its
   * own, a kill after a cancel timeout): its thread's next turn starts another process.
   */
  onAgentRestart?: () => void;
  /** Called for each agent process started (spawned and initialized). */
  onAgentStarted?: () => void;
  /** Called for each failed start of an agent process (spawn or `initialize`), with the run so far. */
  onAgentStartFailed?: (failures: StartFailures) => void;
  /**
   * Agent processes started at once; later starts (threads' and warm spares' alike) wait in order.
   * Default `agentDefaults.startConcurrency()`.
   */
  startConcurrency?: number;
  /** Called as each start begins, with how long it waited for its turn (ms). */
  onAgentStartWaited?: (waitedMs: number) => void;
  /**
   * Live sessions kept per pool, each in its own agent process; idle ones are evicted (and their
   * process stopped) least recently used first. Default `agentDefaults.maxSessions`.
   */
  maxSessions?: number;
  /**
   * Agent processes kept started and initialized, holding no session, so a thread without a session
   * does not wait for one to start: at least this many, more while new threads arrive faster than
   * one spare covers, as `spareMemoryBytes` allows (docs/adr/0047). Processes of all kinds (sessions,
   * spares, starting, stopping) never exceed `maxSessions` + the spares the budget pays for. Default
   * `agentDefaults.warmSpares`.
   */
  warmSpares?: number;
  /** Bytes (PSS) all warm spares may take together; 0 keeps exactly `warmSpares`. Default 0. */
  spareMemoryBytes?: number;
  /** Spares all unused this long: one fewer is kept. Default `agentDefaults.spareShrinkMs`. */
  spareShrinkMs?: number;
  /** Called for each new thread that found no warm spare ready. */
  onSpareMissed?: () => void;
  /** How long a cancelled turn may take to end before its session's process group is killed. */
  cancelTimeoutMs?: number;
  killGraceMs?: number;
  initializeTimeoutMs?: number;
  /**
   * A mode id (ACP session modes) each session is put in once opened, with session/set_mode, when the
   * agent offers it; a mode it does not offer is logged and the session kept as opened. Unset: none.
   */
  sessionMode?: string;
  /** A thread's own mode (its route's, docs/adr/0058), over `sessionMode`; undefined: `sessionMode`. */
  sessionModeOf?: (threadKey: string) => string | undefined;
  /** A thread's own MCP servers (its route's), replacing the agent's whole; undefined: the agent's. */
  mcpServersOf?: (threadKey: string) => readonly McpServer[] | undefined;
  clientInfo?: Implementation;
  /** Told of each agent process group the pool starts and of its end. */
  watcher?: ProcessWatcher;
  logger?: LogSink;
}

/** Opens a session on `agent`, with the thread's own MCP servers where its route sets them. */
type SessionOpener = (
  agent: AgentProcess,
  cwd: string,
  mcpServers: readonly McpServer[] | undefined,
) => Promise<OpenedSession & SessionSetup>;

/** Rooms when the pool has none: every process and session in one directory. */
function sharedRooms(cwd: string): AgentRooms {
  const room = { workspace: cwd, home: cwd };
  return {
    spare: async () => room,
    thread: async () => room,
    adopt: async () => {},
    discard: async () => {},
  };
}

interface Attached {
  session: PooledSession;
  path: SessionPath;
}

/**
 * The ACP sessions of one worker, one per thread key, each in an agent process of its own: killing a
 * hung or crashed agent ends only that thread's turn. A dead process takes its session with it; the
 * thread's next call starts a fresh process (and resumes or reloads the session when asked to).
 */
export class SessionPool {
  readonly #options: SessionPoolOptions;
  readonly #logger: LogSink;
  readonly #sessions: SessionRegistry;
  readonly #opening = new Map<string, Promise<Attached>>();
  /** Sessions being opened that have no process yet: each may need one more, so spares leave room. */
  #awaitingProcess = 0;
  readonly #agents: AgentSupervisor;
  readonly #spares: WarmSpares;
  /** Where processes start: threads' and spares' own rooms in a sandbox, `cwd` for all without. */
  readonly #rooms: AgentRooms;
  /** Where threads' sessions are opened (their workspaces), sandboxed or not. */
  readonly #threadRooms: AgentRooms;
  readonly #sandbox: AgentSandbox;
  /** Processes started in a spare's room that a thread has taken: their room is the thread's now. */
  readonly #taken = new WeakSet<AgentProcess>();
  readonly #maxSessions: number;
  /** A process being started to answer agentInfo() before any had started; it becomes a spare. */
  #probe: Promise<AgentInfo> | undefined;
  readonly #newSession: SessionOpener = async (agent, cwd, mcpServers) => {
    const { sessionId, modes } = await agent.openNewSession(cwd, mcpServers);
    return { sessionId, modes, path: 'new' };
  };

  constructor(options: SessionPoolOptions) {
    this.#options = options;
    this.#logger = options.logger ?? silentLogger;
    const maxSessions = Math.max(1, options.maxSessions ?? agentDefaults.maxSessions);
    this.#maxSessions = maxSessions;
    const startConcurrency = options.startConcurrency ?? agentDefaults.startConcurrency();
    this.#sessions = new SessionRegistry(maxSessions);
    const router = new SessionRouter(this.#sessions, options, this.#logger);
    this.#sandbox = options.sandbox ?? noSandbox;
    const launcher = options.launcher ?? localLauncher(this.#sandbox, this.#logger);
    // Unsandboxed, a process holds its room's path itself: a spare's cannot become a thread's.
    this.#rooms = options.rooms && this.#sandbox.roomsMove ? options.rooms : sharedRooms(options.cwd);
    this.#agents = new AgentSupervisor({
      start: (room) =>
        AgentProcess.start({
          ...options.agent,
          cwd: room.workspace,
          home: room.home,
          launcher,
          clientInfo: options.clientInfo,
          killGraceMs: options.killGraceMs,
          initializeTimeoutMs: options.initializeTimeoutMs,
          ...(options.watcher ? { watcher: options.watcher } : {}),
          logger: this.#logger,
          onSessionUpdate: (sessionId, event, from) => router.route(sessionId, event, from),
          onPermissionRequest: (request, from) => router.answerPermission(request, from),
        }).then((agent) => {
          options.onAgentStarted?.();
          return agent;
        }),
      onEnded: (ended) => this.#ended(ended),
      onStartFailed: (failures) => options.onAgentStartFailed?.(failures),
      startConcurrency,
      ...(options.onAgentStartWaited ? { onStartWaited: options.onAgentStartWaited } : {}),
    });
    this.#threadRooms = options.rooms ?? this.#rooms;
    this.#spares = new WarmSpares({
      floor: options.warmSpares ?? agentDefaults.warmSpares,
      memoryBudget: options.spareMemoryBytes ?? 0,
      shrinkAfterMs: options.spareShrinkMs ?? agentDefaults.spareShrinkMs,
      start: () => this.#startSpare(),
      stop: (agent) => void this.#agents.retire(agent),
      // One process slot stays free for a session being opened, no spare starts while a thread's
      // start waits for its turn, and spares take at most all but one start slot: they never crowd
      // out a thread, and the turns being answered keep a CPU while spares are replaced.
      hasRoom: () =>
        this.#agents.processCount + this.#awaitingProcess < this.#maxProcesses &&
        this.#agents.startsWaiting === 0,
      maxStarting: Math.max(1, startConcurrency - 1),
      ...(options.onSpareMissed ? { onMissed: options.onSpareMissed } : {}),
      logger: this.#logger,
    });
  }

  /** Starts the warm spares now, rather than when the first session is opened. */
  warm(): void {
    this.#spares.fill();
  }

  /**
   * The agent's answer to `initialize`, as the most recently started process gave it. Only when no
   * process has started yet does this start one, kept for the next session.
   */
  async agentInfo(): Promise<AgentInfo> {
    const known = this.#agents.info;
    if (known) return known;
    this.#probe ??= this.#startSpare().then(
      (agent) => {
        this.#spares.adopt(agent);
        return agent.info;
      },
      (error: unknown) => {
        // A failed start is not remembered: the next call tries again.
        this.#probe = undefined;
        throw error;
      },
    );
    return this.#probe;
  }

  /** Pid of the agent process holding the thread's session, if it has one. */
  pidOf(threadKey: string): number | undefined {
    return this.#sessions.get(threadKey)?.agent.pid;
  }

  /** Failed starts of the agent in a row, and the last reason. */
  get startFailures(): StartFailures {
    return this.#agents.startFailures;
  }

  /** Sessions open on live agent processes. */
  get liveSessions(): number {
    return this.#sessions.liveCount;
  }

  /** Agent processes: one per live session, plus spares and those starting or being stopped. */
  get liveProcesses(): number {
    return this.#agents.processCount;
  }

  /** Warm spares ready to take a thread now. */
  get readySpares(): number {
    return this.#spares.ready;
  }

  /** Warm spares aimed at now: at least `warmSpares`, more while new threads arrive quickly. */
  get spareTarget(): number {
    return this.#spares.target;
  }

  /** What one warm spare was measured to cost (PSS bytes), once one was. */
  get bytesPerSpare(): number | undefined {
    return this.#spares.bytesPerSpare;
  }

  /** The most processes alive at once, sessions, spares, starting and stopping ones together. */
  get #maxProcesses(): number {
    return this.#maxSessions + this.#spares.ceiling;
  }

  /** Agent starts waiting for their turn (`startConcurrency`). */
  get startsWaiting(): number {
    return this.#agents.startsWaiting;
  }

  /** Agent starts under way. */
  get startsRunning(): number {
    return this.#agents.startsRunning;
  }

  /**
   * Tries to start one agent process, to learn whether starting works again, and keeps it as a warm
   * spare (or stops it when no spare is wanted). Rejects with the start's error.
   */
  async probeStart(): Promise<void> {
    const agent = await this.#startSpare();
    if (!this.#spares.wanted) {
      await this.#agents.retire(agent);
      return;
    }
    this.#spares.adopt(agent);
    this.#spares.fill();
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
    const { session, path } = await this.#open(threadKey, async (agent, cwd, mcpServers) => {
      const { supports } = agent.info;
      const resumed =
        supports.resume &&
        (await this.#attempt(threadKey, 'resume', () => agent.resumeSession(sessionId, cwd, mcpServers)));
      if (resumed) return { sessionId, path: 'resumed', modes: resumed.modes };
      // The load's replay arrives before the session is attached to the thread, so #route drops it.
      const loaded =
        supports.loadSession &&
        (await this.#attempt(threadKey, 'load', () => agent.loadSession(sessionId, cwd, mcpServers)));
      if (loaded) return { sessionId, path: 'loaded', modes: loaded.modes };
      return this.#newSession(agent, cwd, mcpServers);
    });
    return { sessionId: session.sessionId, path };
  }

  /**
   * Runs one prompt turn on the thread's session: the one `options.sessionId` names, which fails the
   * turn with SessionGoneError if it is no longer live (its process died since it was attached: a new
   * one would lack what the caller seeded); without it, opened with session/new if the thread has none.
   */
  async runTurn(threadKey: string, blocks: ContentBlock[], options: TurnOptions = {}): Promise<TurnResult> {
    if (options.signal?.aborted) {
      return {
        stopReason: 'cancelled',
        text: '',
        sessionId: options.sessionId ?? '',
        emptyAfterCancel: false,
      };
    }
    const session =
      options.sessionId === undefined
        ? (await this.#open(threadKey, this.#newSession)).session
        : this.#attached(threadKey, options.sessionId);
    if (session.turn) throw new TurnInProgressError(threadKey);
    const turn = new ActiveTurn(options.onUpdate, this.#logger);
    session.turn = turn;
    this.#sessions.touch(session);
    try {
      const result = await driveTurn({
        agent: session.agent,
        previousStopReason: session.lastStopReason,
        threadKey,
        sessionId: session.sessionId,
        blocks,
        turn,
        signal: options.signal,
        cancelTimeoutMs: this.#cancelTimeoutMs,
        logger: this.#logger,
      });
      session.lastStopReason = result.stopReason;
      return this.#withCost(session, result, turn.sessionCost);
    } finally {
      // A turn that failed spent too: the next turn's share starts from what this one reported.
      if (turn.sessionCost !== undefined) session.cost = turn.sessionCost;
      session.turn = undefined;
      this.#sessions.touch(session);
    }
  }

  /**
   * Sends `blocks` into the turn running on the thread's session `sessionId` (docs/adr/0040): only
   * while the prompt is unanswered and not being cancelled, and only to an agent that advertises
   * steering. Whatever the agent answered after the prompt's own answer cannot belong to the turn.
   */
  async steer(threadKey: string, sessionId: string, blocks: ContentBlock[]): Promise<SteerOutcome> {
    const session = this.#sessions.get(threadKey);
    const turn = session?.sessionId === sessionId ? session.turn : undefined;
    if (!session || !turn || turn.answered || turn.cancelling)
      return { kind: 'refused', reason: 'turn_ended' };
    if (!session.agent.info.steering) return { kind: 'refused', reason: 'unsupported' };
    // Bounded like a cancel: the turn's commit waits for its last steer, so a hung agent must not
    // hold it. A steer unanswered in time counts as failed; its messages lead the next batch.
    let timer: NodeJS.Timeout | undefined;
    const unanswered = new Promise<'unanswered'>((resolve) => {
      timer = setTimeout(() => resolve('unanswered'), this.#cancelTimeoutMs);
    });
    try {
      const outcome = await Promise.race([session.agent.steer(sessionId, blocks), unanswered]);
      if (outcome !== 'unanswered') return outcome;
      this.#logger.warn(
        { threadKey, sessionId, waitedMs: this.#cancelTimeoutMs },
        'the agent did not answer a steer; its messages wait for the next turn',
      );
      return { kind: 'refused', reason: 'failed' };
    } catch (error) {
      if (!(error instanceof AgentRequestError)) throw error;
      this.#logger.warn({ threadKey, sessionId, err: error }, 'the agent refused a steer');
      return { kind: 'refused', reason: 'failed' };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Forgets the thread's session and closes it in the agent (e.g. when the worker loses the thread). */
  async release(threadKey: string): Promise<void> {
    const session = this.#sessions.take(threadKey);
    if (session) await this.#closeSession(session, 'released');
  }

  /**
   * Kills the process group of the thread's session at once, without a cancel: another worker may be
   * about to run the thread, and the agent's tools must not run on beside it. Resolves once it is gone.
   */
  async kill(threadKey: string): Promise<void> {
    const session = this.#sessions.take(threadKey);
    if (!session) return;
    this.#logger.warn(
      { threadKey, sessionId: session.sessionId, pid: session.agent.pid },
      'killing the agent of a thread leaving this worker',
    );
    await this.#agents.retire(session.agent, { now: true });
  }

  /** Kills every agent process group; the pool refuses further work. */
  async close(): Promise<void> {
    this.#sessions.clear();
    this.#spares.close();
    await this.#agents.close();
  }

  get #cancelTimeoutMs(): number {
    return this.#options.cancelTimeoutMs ?? agentDefaults.cancelTimeoutMs;
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

  /** The turn's share of the session's cost, from the session's reports before and after it. */
  #withCost(session: PooledSession, result: TurnResult, after: Cost | undefined): TurnResult {
    if (after === undefined) return result;
    const before = session.cost === 'zero' ? { amount: 0, currency: after.currency } : session.cost;
    const cost = costOfTurn(before, after);
    return cost === undefined ? result : { ...result, cost };
  }

  #attached(threadKey: string, sessionId: string): PooledSession {
    const session = this.#sessions.get(threadKey);
    if (session?.sessionId !== sessionId) throw new SessionGoneError(threadKey, sessionId);
    return session;
  }

  async #create(threadKey: string, opener: SessionOpener): Promise<Attached> {
    const evicted = this.#sessions.evictFor(this.#opening.size);
    const closing = Promise.all(evicted.map((session) => this.#closeSession(session, 'evicted')));
    this.#awaitingProcess++;
    let agent: AgentProcess;
    let cwd: string;
    try {
      const room = await this.#threadRooms.thread(threadKey);
      cwd = this.#sandbox.sessionCwd(room);
      agent = await this.#processFor(threadKey, closing);
    } finally {
      this.#awaitingProcess--;
      // The slot held for this session's process is free again for a spare.
      this.#spares.fill();
    }
    let opened: OpenedSession;
    try {
      const { modes, ...rest } = await opener(agent, cwd, this.#options.mcpServersOf?.(threadKey));
      opened = rest;
      const modeId = this.#options.sessionModeOf?.(threadKey) ?? this.#options.sessionMode;
      if (modeId !== undefined) {
        await applyConfiguredMode(
          { agent, threadKey, sessionId: opened.sessionId, modes, modeId },
          this.#logger,
        );
      }
    } catch (error) {
      // A process that could not take the thread's session carries nothing; it is not kept.
      void this.#agents.retire(agent);
      throw error;
    }
    const session = this.#sessions.add(
      threadKey,
      opened.sessionId,
      agent,
      opened.path === 'new' ? 'new' : 'reopened',
    );
    this.#logger.info({ threadKey, ...opened, cwd, pid: agent.pid }, 'session opened');
    return { session, path: opened.path };
  }

  /**
   * A warm spare if one is ready or about to be, else a new process. A spare adds no process, so the
   * sessions evicted for this one may still be stopping; a new process starts only once they are gone,
   * so that the processes never exceed the cap. The spare's replacement waits for them either way.
   */
  async #processFor(threadKey: string, evicting: Promise<unknown>): Promise<AgentProcess> {
    await this.#probe?.catch(() => undefined);
    const spare = await this.#spares.claim();
    if (spare) {
      try {
        await this.#rooms.adopt(spare.room, threadKey);
        this.#taken.add(spare);
        return spare;
      } catch (error) {
        this.#logger.warn(
          { threadKey, err: error },
          "a warm spare could not take the thread's files; starting another",
        );
        void this.#agents.retire(spare);
      }
    }
    await evicting;
    return this.#agents.start(await this.#rooms.thread(threadKey));
  }

  /** Starts a process in a room of its own, deleted when it ends without a thread having taken it. */
  async #startSpare(): Promise<AgentProcess> {
    const room = await this.#rooms.spare();
    let agent: AgentProcess;
    try {
      agent = await this.#agents.start(room);
    } catch (error) {
      await this.#discard(room);
      throw error;
    }
    void agent.exited.then(() => (this.#taken.has(agent) ? undefined : this.#discard(room)));
    return agent;
  }

  async #discard(room: AgentRoom): Promise<void> {
    await this.#rooms
      .discard(room)
      .catch((error: unknown) =>
        this.#logger.warn({ err: error, room }, 'a spare agent room was not deleted'),
      );
  }

  /**
   * Closes the session in the agent (when advertised), then stops its process and waits until it is
   * gone: the process a new session starts in its place must not exceed the pool's cap.
   */
  async #closeSession(session: PooledSession, reason: 'evicted' | 'released'): Promise<void> {
    const { agent, threadKey, sessionId } = session;
    this.#logger.info({ threadKey, sessionId, reason, pid: agent.pid }, 'session dropped');
    if (!agent.alive) return;
    // Bounded: the process is stopped next anyway, and an agent that does not answer must not hold up
    // the session that is being opened in its place.
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.#cancelTimeoutMs);
    });
    try {
      if (agent.info.supports.close) await Promise.race([agent.closeSession(sessionId), bound]);
    } catch (error) {
      this.#logger.warn({ threadKey, sessionId, err: error }, 'session/close failed');
    } finally {
      clearTimeout(timer);
    }
    await this.#agents.retire(agent);
  }

  #ended({ agent, retired }: AgentEnded): void {
    this.#sessions.forgetAgent(agent);
    if (!retired) this.#options.onAgentRestart?.();
    // A process gone makes room for a spare that waited for it.
    this.#spares.fill();
  }

  /** Runs a continuity step; the agent refusing it (unknown session...) means "try the next path". */
  async #attempt<T>(threadKey: string, step: string, call: () => Promise<T>): Promise<T | undefined> {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof AgentRequestError)) throw error;
      this.#logger.info(
        { threadKey, step, code: error.code, reason: error.agentMessage },
        'session continuity step refused',
      );
      return undefined;
    }
  }
}
