import { rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { type LogSink, silentLogger } from '@tributary/observability';
import type { AgentLauncher, LaunchedAgent, LaunchLine } from '../launch/launched-agent.js';
import { stillRunning } from '../process-tree.js';
import type { AgentSandbox } from '../sandbox/agent-sandbox.js';
import { encodeFrame, FRAME, type Frame, FrameReader, json } from './frames.js';

/** What a worker learns of the host when its warden takes the lease: the isolation its agents get. */
export interface HostIsolation {
  kind: AgentSandbox['kind'];
  describe: string;
  /** The working directory sessions of the thread in a room open in (the sandbox's `/workspace`, or the room's). */
  workspace: string | null;
  roomsMove: boolean;
}

export interface AgentHostOptions {
  socketPath: string;
  /** Starts the agents here, in this container's sandbox. */
  launcher: AgentLauncher;
  sandbox: AgentSandbox;
  logger?: LogSink;
}

/** The lease a warden takes: pulses while its worker answers; none within this long ends every agent. */
interface Lease {
  toleranceMs: number;
}

/**
 * The agent host (docs/adr/0045): in a container of its own beside the worker, holding none of the
 * worker's secrets, it starts agent processes for the worker over a Unix socket and carries invariant
 * I9 there: it runs agents only while a warden holds its lease, and kills every agent and everything
 * they started when that lease breaks or stalls, when the warden revokes it, and each agent alone when
 * that agent's own connection breaks.
 */
export class AgentHost {
  readonly #options: AgentHostOptions;
  readonly #logger: LogSink;
  readonly #agents = new Map<Socket, LaunchedAgent>();
  #server: Server | undefined;
  #lease: { socket: Socket; lastPulseAt: number; toleranceMs: number } | undefined;
  #ticker: NodeJS.Timeout | undefined;

  constructor(options: AgentHostOptions) {
    this.#options = options;
    this.#logger = options.logger ?? silentLogger;
  }

  get agents(): number {
    return this.#agents.size;
  }

  async listen(): Promise<void> {
    await rm(this.#options.socketPath, { force: true });
    this.#server = createServer((socket) => this.#accept(socket));
    await new Promise<void>((resolve, reject) => {
      this.#server!.once('error', reject);
      this.#server!.listen(this.#options.socketPath, () => resolve());
    });
    this.#ticker = setInterval(() => this.#checkLease(), 100);
    this.#logger.info(
      { socket: this.#options.socketPath, isolation: this.#options.sandbox.describe },
      'agent host listening',
    );
  }

  /** Kills every agent and stops listening. */
  async close(): Promise<void> {
    clearInterval(this.#ticker);
    await this.#killAll('the agent host stops');
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }

  #accept(socket: Socket): void {
    const reader = new FrameReader();
    let role: 'agent' | 'lease' | undefined;
    socket.on('data', (chunk: Buffer) => {
      let frames: Frame[];
      try {
        frames = reader.push(chunk);
      } catch (error) {
        this.#logger.warn({ err: error }, 'agent host dropped a connection that is not speaking its frames');
        socket.destroy();
        return;
      }
      for (const frame of frames) {
        if (role === undefined) {
          if (frame.kind === FRAME.hello) {
            socket.end(encodeFrame(FRAME.hello, this.#isolation()));
            return;
          }
          role = frame.kind === FRAME.lease ? 'lease' : 'agent';
          if (role === 'lease') this.#takeLease(socket, json<Lease>(frame));
          else if (frame.kind === FRAME.spawn) void this.#spawn(socket, json<LaunchLine>(frame));
          else socket.destroy();
        } else if (role === 'lease') this.#onLeaseFrame(socket, frame);
        else this.#onAgentFrame(socket, frame);
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      if (this.#lease?.socket === socket) void this.#leaseLost('the warden’s connection closed');
      const agent = this.#agents.get(socket);
      // The worker's end is gone (it died, or dropped the agent): the agent must not run on for nobody.
      if (agent?.running) {
        this.#logger.warn({ pid: agent.pid }, 'agent connection closed while the agent ran; killing it');
        agent.killAll();
      }
    });
  }

  #takeLease(socket: Socket, lease: Lease): void {
    if (this.#lease && !this.#lease.socket.destroyed) {
      this.#logger.warn({}, 'a second warden asked for the lease; refused');
      socket.destroy();
      return;
    }
    this.#lease = { socket, lastPulseAt: performance.now(), toleranceMs: lease.toleranceMs };
    socket.write(encodeFrame(FRAME.lease));
    this.#logger.info({ toleranceMs: lease.toleranceMs }, 'a warden holds the lease; agents may start');
  }

  #isolation(): HostIsolation {
    const { kind, describe, roomsMove } = this.#options.sandbox;
    // A sandbox shows every room at one path; without one, a session opens in its room's own path.
    const workspace = roomsMove ? this.#options.sandbox.sessionCwd({ workspace: '', home: '' }) : null;
    return { kind, describe, workspace, roomsMove };
  }

  #onLeaseFrame(socket: Socket, frame: Frame): void {
    if (this.#lease?.socket !== socket) return;
    if (frame.kind === FRAME.pulse) this.#lease.lastPulseAt = performance.now();
    else if (frame.kind === FRAME.revoke) {
      void this.#killAll('the warden revoked its worker').then((survivors) =>
        socket.write(encodeFrame(FRAME.revoked, { survivors })),
      );
    }
  }

  #checkLease(): void {
    const lease = this.#lease;
    if (lease && performance.now() - lease.lastPulseAt > lease.toleranceMs) {
      void this.#leaseLost(`no pulse from the warden for ${lease.toleranceMs} ms`);
    }
  }

  async #leaseLost(why: string): Promise<void> {
    const lease = this.#lease;
    if (!lease) return;
    this.#lease = undefined;
    lease.socket.destroy();
    const killed = this.#agents.size;
    await this.#killAll(why);
    this.#logger.error(
      { why, killed },
      'the worker’s lease is gone: killed its agents; none starts until a warden takes it again',
    );
  }

  /** SIGKILL to every agent and what it started; the pids still running after a bound. */
  async #killAll(why: string): Promise<number[]> {
    const agents = [...this.#agents.values()];
    for (const agent of agents) agent.killAll();
    await Promise.race([
      Promise.all(agents.map((agent) => agent.exit)),
      new Promise((r) => setTimeout(r, 2000)),
    ]);
    const survivors = stillRunning(agents.map((agent) => agent.pid));
    if (agents.length > 0) this.#logger.warn({ why, killed: agents.length, survivors }, 'agents killed');
    return survivors;
  }

  async #spawn(socket: Socket, line: LaunchLine): Promise<void> {
    if (!this.#lease) {
      socket.end(
        encodeFrame(FRAME.failed, {
          message: 'no worker holds this agent host’s lease: agents start only while a warden pulses',
        }),
      );
      return;
    }
    let agent: LaunchedAgent;
    try {
      agent = await this.#options.launcher.launch(line);
    } catch (error) {
      const cause = (error as Error).cause as NodeJS.ErrnoException | undefined;
      socket.end(encodeFrame(FRAME.failed, { message: (error as Error).message, code: cause?.code }));
      return;
    }
    if (socket.destroyed || !this.#lease) {
      agent.killAll();
      return;
    }
    this.#agents.set(socket, agent);
    this.#logger.info({ pid: agent.pid, command: line.command }, 'agent started');
    // A write to an agent that has just exited fails; its exit is reported, not the write.
    agent.stdin.on('error', () => {});
    socket.write(encodeFrame(FRAME.spawned, { pid: agent.pid }));
    agent.stdout.on('data', (chunk: Buffer) => socket.write(encodeFrame(FRAME.stdout, chunk)));
    agent.stderr.on('data', (chunk: Buffer) => socket.write(encodeFrame(FRAME.stderr, chunk)));
    const drained = Promise.all([
      new Promise((resolve) => agent.stdout.once('close', resolve)),
      new Promise((resolve) => agent.stderr.once('close', resolve)),
    ]);
    const exit = await agent.exit;
    // What it wrote before it exited goes first; a tool holding its stdout open must not hold the exit.
    await Promise.race([drained, new Promise((resolve) => setTimeout(resolve, 500))]);
    agent.killAll();
    this.#agents.delete(socket);
    if (!socket.destroyed) socket.end(encodeFrame(FRAME.exit, exit));
  }

  #onAgentFrame(socket: Socket, frame: Frame): void {
    const agent = this.#agents.get(socket);
    if (!agent) return;
    if (frame.kind === FRAME.stdin) agent.stdin.write(frame.payload);
    else if (frame.kind === FRAME.stdinEnd) agent.stdin.end();
    else if (frame.kind === FRAME.terminate) agent.terminate();
    else if (frame.kind === FRAME.killAll) agent.killAll();
  }
}
