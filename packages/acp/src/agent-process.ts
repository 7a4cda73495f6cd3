import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import {
  type ContentBlock,
  type Implementation,
  type McpServer,
  ndJsonStream,
  RequestError,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type Stream,
} from '@agentclientprotocol/sdk';
import { type LogSink, SecretScrubber, silentLogger } from '@tributary/observability';
import { agentDefaults } from './agent-defaults.js';
import { type AgentEnvOptions, buildAgentEnv, DEFAULT_INHERITED_ENV } from './agent-env.js';
import type { AgentInfo } from './agent-info.js';
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
import type { AgentExit, AgentLauncher, LaunchedAgent } from './launch/launched-agent.js';
import { localLauncher } from './launch/local-launcher.js';
import type { AgentProtocol, AgentTraffic, ProtocolVersion, SessionSetup } from './protocol.js';
import { negotiate } from './protocol-negotiation.js';
import { speakV1 } from './protocol-v1.js';
import { speakV2 } from './protocol-v2.js';
import type { AgentRoom } from './sandbox/agent-sandbox.js';
import { StderrTail } from './stderr-tail.js';
import { STEER_METHOD, type SteerOutcome } from './steering.js';
import type { TurnEvent } from './turn-events.js';
import type { PromptEnd } from './turn-usage.js';

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
  /** Working directory of the agent process: the workspace of its room. */
  cwd: string;
  /** Its agent home (HOME) in a sandbox; unsandboxed, the agent keeps the HOME it inherits. */
  home?: string;
  /** Where and how the process runs. Default: a child of this process, unsandboxed. */
  launcher?: AgentLauncher;
  clientInfo?: Implementation;
  /** Bound on the `initialize` answer, and on the `authenticate` one. */
  initializeTimeoutMs?: number;
  /** Time between SIGTERM and SIGKILL of the process group. */
  killGraceMs?: number;
  logger?: LogSink;
  /** Every session update, in the one shape whatever the protocol version. */
  onSessionUpdate?: (sessionId: string, event: TurnEvent, agent: AgentProcess) => void;
  onPermissionRequest?: (
    request: RequestPermissionRequest,
    agent: AgentProcess,
  ) => RequestPermissionResponse | Promise<RequestPermissionResponse>;
}

export type { AgentExit } from './launch/launched-agent.js';

// The code of the SDK's RequestError.authRequired, which it exports no constant for.
const AUTH_REQUIRED = -32000;
// After the leader exits, the protocol stream still drains what it wrote; bound the wait in case a
// straggler holds the pipe open.
const STDOUT_DRAIN_MS = 500;

const manifest: Implementation = {
  name: 'tributary',
  version: (createRequire(import.meta.url)('../package.json') as { version: string }).version,
};

/**
 * One agent process spoken to over ACP on its stdio, started by a launcher (a child of this process,
 * or of an agent host), which ends it and everything it started; its exit fails every call in flight
 * with AgentExitedError.
 */
export class AgentProcess {
  readonly pid: number;
  readonly command: string;
  /** The files it may write, which a warm spare's thread takes over (agent-rooms.ts). */
  readonly room: AgentRoom;
  /** Resolves once the process has exited and its protocol stream is drained. */
  readonly exited: Promise<AgentExit>;
  readonly #launched: LaunchedAgent;
  #protocol: AgentProtocol | undefined;
  readonly #options: AgentProcessOptions;
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
   * Spawns the agent and completes `initialize` in the version the agent answers, then `authenticate`
   * when an auth method is configured; the process is killed if either fails.
   */
  static async start(options: AgentProcessOptions): Promise<AgentProcess> {
    const room = { workspace: options.cwd, home: options.home ?? options.cwd };
    const env = buildAgentEnv(options);
    const launcher = options.launcher ?? localLauncher(undefined, options.logger);
    const launched = await launcher.launch({ command: options.command, args: options.args ?? [], env, room });
    const { pid } = launched;
    // Before anything else: from now on a worker that dies leaves no agent behind.
    options.watcher?.watch(pid);
    // What the operator handed the agent beyond the harmless allowlist is what it may leak.
    const handedOver = Object.entries(env).filter(([name]) => !DEFAULT_INHERITED_ENV.includes(name));
    const scrubber = new SecretScrubber(handedOver.map(([, value]) => value));
    const agent = new AgentProcess(launched, options, scrubber, room);
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
    launched: LaunchedAgent,
    options: AgentProcessOptions,
    scrubber: SecretScrubber,
    room: AgentRoom,
  ) {
    this.#launched = launched;
    const { pid } = launched;
    this.#options = options;
    this.#scrubber = scrubber;
    this.#stderr = new StderrTail((line) => scrubber.scrub(line));
    this.pid = pid;
    this.command = options.command;
    this.room = room;
    this.#authMethod = options.authMethod;
    this.#mcpServers = [...(options.mcpServers ?? [])];
    this.#logger = options.logger ?? silentLogger;
    this.#killGraceMs = options.killGraceMs ?? agentDefaults.killGraceMs;

    launched.stdin.on('error', (error) => this.#logger.debug({ pid, err: error }, 'agent stdin closed'));
    launched.stderr.setEncoding('utf8');
    launched.stderr.on('data', (chunk: string) => {
      for (const line of this.#stderr.push(chunk)) this.#logger.debug({ pid, line }, 'agent stderr');
    });

    this.exited = launched.exit
      .then((exit) => this.#afterExit(exit))
      .then((exit) => {
        options.watcher?.forget(pid);
        return exit;
      });
    this.#exitedRejection = this.exited.then(() => {
      throw this.#exitedError();
    });
    this.#exitedRejection.catch(() => undefined);
    this.#logger.info({ pid, command: this.command }, 'agent process started');
  }

  get info(): AgentInfo {
    if (!this.#info) throw new AcpError('agent process is not initialized');
    return this.#info;
  }

  /** The ACP version negotiated at `initialize`, which every later message speaks. */
  get protocolVersion(): ProtocolVersion {
    return this.#speaking.version;
  }

  get alive(): boolean {
    return this.#exit === undefined;
  }

  /** PSS in bytes of this agent and everything it started, where it runs; undefined once gone. */
  memory(): Promise<number | undefined> {
    return this.#launched.memory();
  }

  /**
   * session/new, with the agent's whole answer (its modes, for one). `mcpServers`: the session's own
   * (its thread's route's), over the process's.
   */
  openNewSession(
    cwd: string,
    mcpServers: readonly McpServer[] = this.#mcpServers,
  ): Promise<{ sessionId: string } & SessionSetup> {
    return this.#call('session/new', (agent) => agent.newSession(cwd, mcpServers));
  }

  /** Reopens a stored session with its history replayed: session/load (v1), session/resume from the start (v2). */
  loadSession(
    sessionId: string,
    cwd: string,
    mcpServers: readonly McpServer[] = this.#mcpServers,
  ): Promise<SessionSetup> {
    return this.#call('session/load', (agent) => agent.loadSession(sessionId, cwd, mcpServers));
  }

  /** session/resume; the answer tells the session's modes, when the agent offers any. */
  resumeSession(
    sessionId: string,
    cwd: string,
    mcpServers: readonly McpServer[] = this.#mcpServers,
  ): Promise<SessionSetup> {
    return this.#call('session/resume', (agent) => agent.resumeSession(sessionId, cwd, mcpServers));
  }

  setSessionMode(sessionId: string, modeId: string): Promise<void> {
    return this.#call('session/set_mode', (agent) => agent.setSessionMode(sessionId, modeId));
  }

  closeSession(sessionId: string): Promise<void> {
    return this.#call('session/close', (agent) => agent.closeSession(sessionId));
  }

  /** session/list: the ids of the sessions the agent keeps for `cwd`, every page of them. */
  listSessions(cwd: string): Promise<string[]> {
    return this.#call('session/list', (agent) => agent.listSessions(cwd));
  }

  /**
   * Sends session/prompt and resolves when the turn has ended, with the stop reason and any usage
   * reported: at the answer (v1) or at the state update that reports the session idle (v2). `onEnded` runs in the first reaction to that end (or to
   * a failure): before any later update is handed on, so the caller can stop attributing updates.
   */
  async prompt(
    sessionId: string,
    prompt: ContentBlock[],
    onEnded: () => void = () => {},
  ): Promise<PromptEnd> {
    return this.#call('session/prompt', (agent) => agent.prompt(sessionId, prompt, onEnded));
  }

  /** Sends `prompt` into the session's running turn (steering.ts has the wire). */
  steer(sessionId: string, prompt: ContentBlock[]): Promise<SteerOutcome> {
    return this.#call(STEER_METHOD, (agent) => agent.steer(sessionId, prompt));
  }

  /** Sends session/cancel; a failure to send is logged, since the process is then going anyway. */
  async cancel(sessionId: string): Promise<void> {
    try {
      await this.#speaking.cancel(sessionId);
    } catch (error) {
      this.#logger.debug({ pid: this.pid, sessionId, err: error }, 'session/cancel not sent');
    }
  }

  /**
   * SIGTERM to the agent and its tools and SIGKILL after the grace period, or SIGKILL at once with
   * `now`; resolves once the agent is gone, and whatever is left of its tools is killed with it
   * (`#afterExit`): a tool that outlives its agent serves nobody, and must not run on beside the
   * thread's next turn elsewhere.
   */
  async kill(how: { now?: boolean } = {}): Promise<AgentExit> {
    if (this.#exit) return this.#exit;
    this.#killRequested = true;
    if (how.now) this.#launched.killAll();
    else this.#launched.terminate();
    const escalation = setTimeout(() => {
      this.#logger.warn(
        { pid: this.pid, graceMs: this.#killGraceMs },
        'agent ignored SIGTERM; sending SIGKILL',
      );
      this.#launched.killAll();
    }, this.#killGraceMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(escalation);
    }
  }

  /** Negotiates the version, then puts that version's SDK on the connection and reads the answer through it. */
  async #initialize(options: AgentProcessOptions): Promise<AgentInfo> {
    const timeoutMs = options.initializeTimeoutMs ?? agentDefaults.initializeTimeoutMs;
    const clientInfo = options.clientInfo ?? manifest;
    const raw = ndJsonStream(
      batchedWriter(this.#launched.stdin),
      Readable.toWeb(this.#launched.stdout) as ReadableStream<Uint8Array>,
    );
    const initialized = (async () => {
      const { version, stream } = await negotiate(raw, { info: clientInfo }).catch(async (error: unknown) => {
        // Output that ends before the answer is most often an agent exiting: its exit says more.
        await Promise.race([this.exited, new Promise((resolve) => setTimeout(resolve, STDOUT_DRAIN_MS))]);
        throw this.#exit ? this.#exitedError() : error;
      });
      this.#protocol = this.#speak(version, stream);
      return this.#protocol.initialize(clientInfo);
    })();
    let info: AgentInfo;
    try {
      info = await this.#withDeadline(
        Promise.race([initialized, this.#exitedRejection]),
        'initialize',
        timeoutMs,
      );
    } catch (error) {
      if (error instanceof UnsupportedProtocolVersionError || error instanceof AgentStartError) throw error;
      throw new AgentStartError(this.command, (error as Error).message, { cause: error });
    }
    this.#logger.info(
      {
        pid: this.pid,
        protocolVersion: info.protocolVersion,
        agentInfo: info.agentInfo,
        supports: info.supports,
        authMethods: info.authMethods.map((m) => m.id),
      },
      'agent initialized',
    );
    return info;
  }

  #speak(version: ProtocolVersion, stream: Stream): AgentProtocol {
    const traffic: AgentTraffic = {
      onUpdate: (sessionId, event) => this.#options.onSessionUpdate?.(sessionId, event, this),
      onPermissionRequest: (request) =>
        this.#options.onPermissionRequest
          ? this.#options.onPermissionRequest(request, this)
          : { outcome: { outcome: 'cancelled' } },
    };
    const protocol = version === 1 ? speakV1(stream, traffic) : speakV2(stream, traffic);
    void protocol.closed.then(() => {
      // A stream closing under a kill we asked for (an eviction, a release) is that kill at work.
      if (this.#launched.running && !this.#killRequested) {
        this.#logger.warn(
          { pid: this.pid },
          'agent protocol stream closed while the process runs; killing it',
        );
        void this.kill();
      }
    });
    return protocol;
  }

  /** The negotiated protocol; every call after `initialize` goes through it. */
  get #speaking(): AgentProtocol {
    if (!this.#protocol) throw new AcpError('agent process is not initialized');
    return this.#protocol;
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
        this.#call('authenticate', (agent) => agent.authenticate(methodId)),
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
  async #call<T>(method: string, send: (agent: AgentProtocol) => Promise<T>): Promise<T> {
    if (this.#exit) throw this.#exitedError();
    try {
      return await Promise.race([send(this.#speaking), this.#exitedRejection]);
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

  async #afterExit(exit: AgentExit): Promise<AgentExit> {
    // Orphans of a dead leader serve nobody: what is left of its group, and of the tools a kill found.
    this.#launched.killAll();
    let drainTimer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.#protocol?.closed,
      new Promise((resolve) => {
        drainTimer = setTimeout(resolve, STDOUT_DRAIN_MS);
      }),
    ]);
    clearTimeout(drainTimer);
    this.#exit = exit;
    this.#protocol?.close(this.#exitedError());
    const level = this.#killRequested ? 'info' : 'warn';
    this.#logger[level]({ pid: this.pid, ...exit }, 'agent process exited');
    return exit;
  }

  #exitedError(): AgentExitedError {
    const { code = null, signal = null } = this.#exit ?? {};
    return new AgentExitedError(this.pid, code, signal, this.#stderr.toString());
  }
}
