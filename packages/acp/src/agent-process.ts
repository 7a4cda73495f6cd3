import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import {
  type ClientConnection,
  type ClientContext,
  type ContentBlock,
  client,
  type Implementation,
  type InitializeResponse,
  type McpServer,
  methods,
  type NewSessionResponse,
  ndJsonStream,
  PROTOCOL_VERSION,
  type PromptResponse,
  RequestError,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionModeState,
  type SessionNotification,
} from '@agentclientprotocol/sdk';
import { type LogSink, SecretScrubber, silentLogger } from '@tributary/observability';
import { agentDefaults } from './agent-defaults.js';
import { type AgentEnvOptions, buildAgentEnv, DEFAULT_INHERITED_ENV } from './agent-env.js';
import { type AgentInfo, toAgentInfo } from './agent-info.js';
import { batchedWriter } from './batched-writer.js';
import {
  AcpError,
  AgentAuthError,
  AgentExitedError,
  AgentRequestError,
  AgentStartError,
  AgentStartTimeoutError,
  UnsupportedProtocolVersionError,
} from './errors.js';
import { agentProcesses } from './process-tree.js';
import { StderrTail } from './stderr-tail.js';
import { STEER_METHOD, type SteerOutcome, sendSteer } from './steering.js';

/** How to start an agent: the command and what it may see of our environment. */
export interface AgentCommandConfig extends AgentEnvOptions {
  command: string;
  args?: readonly string[];
  /**
   * An auth method the agent offers: `authenticate` is called with it right after `initialize`. Unset:
   * never called, since an advertised method may start an interactive login (docs/adr/0017).
   */
  authMethod?: string;
  /** MCP servers handed to the agent with every session/new, session/load and session/resume. Default none. */
  mcpServers?: readonly McpServer[];
}

/** What an agent answered when a session opened: the modes it offers, when it offers any. */
export interface SessionSetup {
  modes?: SessionModeState | null;
}

/**
 * Told of every agent process group as soon as it exists and again when it is gone, so something that
 * outlives a dead worker can kill what the worker started (docs/adr/0037).
 */
export interface ProcessWatcher {
  watch(pgid: number): void;
  forget(pgid: number): void;
}

export interface AgentProcessOptions extends AgentCommandConfig {
  watcher?: ProcessWatcher;
  /** Working directory of the agent process. */
  cwd: string;
  clientInfo?: Implementation;
  /** Bound on the `initialize` answer, and on the `authenticate` one. */
  initializeTimeoutMs?: number;
  /** Time between SIGTERM and SIGKILL of the process group. */
  killGraceMs?: number;
  logger?: LogSink;
  onSessionUpdate?: (notification: SessionNotification, agent: AgentProcess) => void;
  onPermissionRequest?: (
    request: RequestPermissionRequest,
    agent: AgentProcess,
  ) => RequestPermissionResponse | Promise<RequestPermissionResponse>;
}

export interface AgentExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

// The codes of the SDK's RequestError.unsupportedProtocolVersion and .authRequired, which it exports
// no constants for.
const UNSUPPORTED_PROTOCOL_VERSION = -32022;
const AUTH_REQUIRED = -32000;
// After the leader exits, the protocol stream still drains what it wrote; bound the wait in case a
// straggler holds the pipe open.
const STDOUT_DRAIN_MS = 500;

const manifest: Implementation = {
  name: 'tributary',
  version: (createRequire(import.meta.url)('../package.json') as { version: string }).version,
};

function spawned(child: ChildProcessWithoutNullStreams, command: string): Promise<number> {
  return new Promise((resolve, reject) => {
    child.once('spawn', () => resolve(child.pid ?? -1));
    child.once('error', (error) => reject(new AgentStartError(command, error.message, { cause: error })));
  });
}

/**
 * One agent child process spoken to over ACP on its stdio. It leads its own process group, which is
 * what gets killed; its exit fails every call in flight with AgentExitedError.
 */
export class AgentProcess {
  readonly pid: number;
  readonly command: string;
  /** Resolves once the process has exited and its protocol stream is drained. */
  readonly exited: Promise<AgentExit>;
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #connection: ClientConnection;
  readonly #logger: LogSink;
  readonly #killGraceMs: number;
  readonly #scrubber: SecretScrubber;
  readonly #stderr: StderrTail;
  readonly #exitedRejection: Promise<never>;
  #exit: AgentExit | undefined;
  #info: AgentInfo | undefined;
  readonly #authMethod: string | undefined;
  readonly #mcpServers: McpServer[];
  #killRequested = false;

  /**
   * Spawns the agent and completes `initialize`, then `authenticate` when an auth method is
   * configured; the process is killed if either fails.
   */
  static async start(options: AgentProcessOptions): Promise<AgentProcess> {
    const env = buildAgentEnv(options);
    const child = spawn(options.command, options.args ?? [], {
      cwd: options.cwd,
      env,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const pid = await spawned(child, options.command);
    // Before anything else: from now on a worker that dies leaves no agent behind.
    options.watcher?.watch(pid);
    // What the operator handed the agent beyond the harmless allowlist is what it may leak.
    const handedOver = Object.entries(env).filter(([name]) => !DEFAULT_INHERITED_ENV.includes(name));
    const scrubber = new SecretScrubber(handedOver.map(([, value]) => value));
    const agent = new AgentProcess(child, pid, options, scrubber);
    try {
      agent.#info = await agent.#initialize(options);
      await agent.#authenticate(options.initializeTimeoutMs ?? agentDefaults.initializeTimeoutMs);
    } catch (error) {
      await agent.kill();
      throw error;
    }
    return agent;
  }

  private constructor(
    child: ChildProcessWithoutNullStreams,
    pid: number,
    options: AgentProcessOptions,
    scrubber: SecretScrubber,
  ) {
    this.#child = child;
    this.#scrubber = scrubber;
    this.#stderr = new StderrTail((line) => scrubber.scrub(line));
    this.pid = pid;
    this.command = options.command;
    this.#authMethod = options.authMethod;
    this.#mcpServers = [...(options.mcpServers ?? [])];
    this.#logger = options.logger ?? silentLogger;
    this.#killGraceMs = options.killGraceMs ?? agentDefaults.killGraceMs;

    child.on('error', (error) => this.#logger.warn({ pid, err: error }, 'agent process error'));
    child.stdin.on('error', (error) => this.#logger.debug({ pid, err: error }, 'agent stdin closed'));
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      for (const line of this.#stderr.push(chunk)) this.#logger.debug({ pid, line }, 'agent stderr');
    });

    // session/update is registered first so that an update is handed over before a prompt response
    // read after it resolves the prompt.
    const app = client({ name: manifest.name })
      .onNotification(methods.client.session.update, ({ params }) => options.onSessionUpdate?.(params, this))
      .onRequest(methods.client.session.requestPermission, async ({ params }) =>
        options.onPermissionRequest
          ? options.onPermissionRequest(params, this)
          : { outcome: { outcome: 'cancelled' as const } },
      );
    this.#connection = app.connect(
      ndJsonStream(batchedWriter(child.stdin), Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>),
    );

    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        void this.#afterExit({ code, signal }).then((exit) => {
          options.watcher?.forget(pid);
          resolve(exit);
        });
      });
    });
    this.#exitedRejection = this.exited.then(() => {
      throw this.#exitedError();
    });
    this.#exitedRejection.catch(() => undefined);
    void this.#connection.closed.then(() => {
      // A stream closing under a kill we asked for (an eviction, a release) is that kill at work.
      if (this.#running() && !this.#killRequested) {
        this.#logger.warn({ pid }, 'agent protocol stream closed while the process runs; killing it');
        void this.kill();
      }
    });
    this.#logger.info({ pid, command: this.command }, 'agent process started');
  }

  get info(): AgentInfo {
    if (!this.#info) throw new AcpError('agent process is not initialized');
    return this.#info;
  }

  get alive(): boolean {
    return this.#exit === undefined;
  }

  /** session/new, with the agent's whole answer (its modes, for one). */
  openNewSession(cwd: string): Promise<NewSessionResponse> {
    return this.#call(methods.agent.session.new, (agent) =>
      agent.request(methods.agent.session.new, { cwd, mcpServers: this.#mcpServers }),
    );
  }

  /** session/load; the answer tells the session's modes, when the agent offers any. */
  loadSession(sessionId: string, cwd: string): Promise<SessionSetup> {
    return this.#reopen('load', sessionId, cwd);
  }

  /** session/resume; the answer tells the session's modes, when the agent offers any. */
  resumeSession(sessionId: string, cwd: string): Promise<SessionSetup> {
    return this.#reopen('resume', sessionId, cwd);
  }

  /** Load and resume take the same parameters and answer the same way. */
  #reopen(how: 'load' | 'resume', sessionId: string, cwd: string): Promise<SessionSetup> {
    const method = how === 'load' ? methods.agent.session.load : methods.agent.session.resume;
    const params = { sessionId, cwd, mcpServers: this.#mcpServers };
    return this.#call(method, async (agent) => {
      // Both answers carry the session's modes; named here because the two types do not unify.
      const answer: { modes?: SessionSetup['modes'] } | null | undefined =
        how === 'load'
          ? await agent.request(methods.agent.session.load, params)
          : await agent.request(methods.agent.session.resume, params);
      return { modes: answer?.modes };
    });
  }

  setSessionMode(sessionId: string, modeId: string): Promise<void> {
    return this.#call(methods.agent.session.setMode, async (agent) => {
      await agent.request(methods.agent.session.setMode, { sessionId, modeId });
    });
  }

  closeSession(sessionId: string): Promise<void> {
    return this.#call(methods.agent.session.close, async (agent) => {
      await agent.request(methods.agent.session.close, { sessionId });
    });
  }

  /**
   * Sends session/prompt. `onAnswered` runs in the first reaction to the answer (or failure): before
   * the SDK dispatches any update read after the answer, so the caller can stop attributing updates.
   */
  prompt(sessionId: string, prompt: ContentBlock[], onAnswered?: () => void): Promise<PromptResponse> {
    return this.#call(methods.agent.session.prompt, (agent) => {
      const answer = agent.request(methods.agent.session.prompt, { sessionId, prompt });
      if (onAnswered) answer.then(onAnswered, onAnswered);
      return answer;
    });
  }

  /** Sends `prompt` into the session's running turn (steering.ts has the wire). */
  steer(sessionId: string, prompt: ContentBlock[]): Promise<SteerOutcome> {
    return this.#call(STEER_METHOD, (agent) => sendSteer(agent, sessionId, prompt));
  }

  /** Sends session/cancel; a failure to send is logged, since the process is then going anyway. */
  async cancel(sessionId: string): Promise<void> {
    try {
      await this.#connection.agent.notify(methods.agent.session.cancel, { sessionId });
    } catch (error) {
      this.#logger.debug({ pid: this.pid, sessionId, err: error }, 'session/cancel not sent');
    }
  }

  /**
   * SIGTERM to the process group and SIGKILL after the grace period, or SIGKILL at once with `now`;
   * resolves once it is gone.
   */
  async kill(how: { now?: boolean } = {}): Promise<AgentExit> {
    if (this.#exit) return this.#exit;
    this.#killRequested = true;
    this.#signalAgent(how.now ? 'SIGKILL' : 'SIGTERM');
    const escalation = setTimeout(() => {
      this.#logger.warn(
        { pid: this.pid, graceMs: this.#killGraceMs },
        'agent ignored SIGTERM; sending SIGKILL',
      );
      this.#signalAgent('SIGKILL');
    }, this.#killGraceMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(escalation);
    }
  }

  async #initialize(options: AgentProcessOptions): Promise<AgentInfo> {
    const timeoutMs = options.initializeTimeoutMs ?? agentDefaults.initializeTimeoutMs;
    const request = this.#call<InitializeResponse>(methods.agent.initialize, (agent) =>
      agent.request(methods.agent.initialize, {
        protocolVersion: PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
        clientInfo: options.clientInfo ?? manifest,
      }),
    );
    let response: InitializeResponse;
    try {
      response = await this.#withDeadline(request, 'initialize', timeoutMs);
    } catch (error) {
      if (error instanceof AgentRequestError && error.code === UNSUPPORTED_PROTOCOL_VERSION) {
        throw new UnsupportedProtocolVersionError(PROTOCOL_VERSION, undefined);
      }
      if (error instanceof AgentStartError) throw error;
      throw new AgentStartError(this.command, (error as Error).message, { cause: error });
    }
    if (response.protocolVersion !== PROTOCOL_VERSION) {
      throw new UnsupportedProtocolVersionError(PROTOCOL_VERSION, response.protocolVersion);
    }
    const info = toAgentInfo(response);
    this.#logger.info(
      {
        pid: this.pid,
        agentInfo: info.agentInfo,
        supports: info.supports,
        authMethods: info.authMethods.map((m) => m.id),
      },
      'agent initialized',
    );
    return info;
  }

  /**
   * `authenticate` with the configured method. An agent that offers no method needs none, so there is
   * nothing to call; a method it does not offer, or one it rejects, is an AgentAuthError.
   */
  async #authenticate(timeoutMs: number): Promise<void> {
    const methodId = this.#authMethod;
    const offered = this.info.authMethods;
    if (methodId === undefined) return;
    if (offered.length === 0) {
      this.#logger.info({ pid: this.pid, methodId }, 'agent offers no auth methods; not authenticating');
      return;
    }
    const method = offered.find((m) => m.id === methodId);
    if (!method) throw new AgentAuthError('authenticate', offered, methodId, undefined);
    if (method.type === 'terminal') {
      throw new AgentAuthError(
        'authenticate',
        offered,
        methodId,
        'a terminal method is signed in by running the agent interactively, never through authenticate',
      );
    }
    try {
      await this.#withDeadline(
        this.#call(methods.agent.authenticate, (agent) =>
          agent.request(methods.agent.authenticate, { methodId }),
        ),
        'authenticate',
        timeoutMs,
      );
    } catch (error) {
      if (error instanceof AgentAuthError) throw error;
      if (error instanceof AgentRequestError) {
        throw new AgentAuthError('authenticate', offered, methodId, error.agentMessage, { cause: error });
      }
      throw error;
    }
    this.#logger.info({ pid: this.pid, methodId }, 'agent authenticated');
  }

  /** The request's answer, or AgentStartTimeoutError when none comes within `timeoutMs`. */
  async #withDeadline<T>(
    request: Promise<T>,
    what: 'initialize' | 'authenticate',
    timeoutMs: number,
  ): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new AgentStartTimeoutError(this.command, what, timeoutMs)), timeoutMs);
    });
    try {
      return await Promise.race([request, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Sends one request; JSON-RPC errors become AgentRequestError, a dead stream AgentExitedError. */
  async #call<T>(method: string, send: (agent: ClientContext) => Promise<T>): Promise<T> {
    if (this.#exit) throw this.#exitedError();
    try {
      return await Promise.race([send(this.#connection.agent), this.#exitedRejection]);
    } catch (error) {
      if (error instanceof AcpError) throw error;
      // The agent's own words travel on in our errors (logs, dead-letter reasons): scrubbed first, and
      // without the SDK error as cause, whose message and data still hold them.
      if (error instanceof RequestError && error.code === AUTH_REQUIRED) {
        const offered = this.#info?.authMethods ?? [];
        throw new AgentAuthError(method, offered, this.#authMethod, this.#scrubber.scrub(error.message));
      }
      if (error instanceof RequestError) {
        throw new AgentRequestError(method, error.code, this.#scrubber.scrub(error.message));
      }
      // The connection failed under the call: the process is unusable, so make sure it ends.
      await this.kill();
      throw this.#exitedError();
    }
  }

  /**
   * Signals the whole group (spawned detached, so pgid = pid). Never throws: kill paths run from timers
   * and exit handlers that must not fail. A group already gone is not an error.
   */
  #signalGroup(signal: NodeJS.Signals): void {
    try {
      process.kill(-this.pid, signal);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ESRCH') return;
      this.#logger.error({ pid: this.pid, signal, err: error }, 'could not signal the agent process group');
    }
  }

  /**
   * Signals the agent's group and the tools it started in sessions of their own (setsid), which a
   * group signal misses; their parentage still leads to the agent while it runs.
   */
  #signalAgent(signal: NodeJS.Signals): void {
    // Read first: once the agent is dead its tools belong to init, and nothing leads to them.
    const tools = agentProcesses([this.pid]);
    this.#signalGroup(signal);
    for (const pid of tools) {
      try {
        process.kill(pid, signal);
      } catch {
        // Gone meanwhile.
      }
    }
  }

  #running(): boolean {
    return this.#child.exitCode === null && this.#child.signalCode === null;
  }

  async #afterExit(exit: AgentExit): Promise<AgentExit> {
    // Orphans of a dead leader serve nobody; kill what is left of the group.
    this.#signalGroup('SIGKILL');
    let drainTimer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.#connection.closed,
      new Promise((resolve) => {
        drainTimer = setTimeout(resolve, STDOUT_DRAIN_MS);
      }),
    ]);
    clearTimeout(drainTimer);
    this.#exit = exit;
    this.#connection.close(this.#exitedError());
    const level = this.#killRequested ? 'info' : 'warn';
    this.#logger[level]({ pid: this.pid, ...exit }, 'agent process exited');
    return exit;
  }

  #exitedError(): AgentExitedError {
    const { code = null, signal = null } = this.#exit ?? {};
    return new AgentExitedError(this.pid, code, signal, this.#stderr.toString());
  }
}
