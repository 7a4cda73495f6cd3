import { randomBytes, timingSafeEqual } from 'node:crypto';
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

/** What a warden asks for: pulses while its worker answers; none within this long ends its agents. */
interface LeaseRequest {
  toleranceMs: number;
}

/** A spawn: the agent's line, and the ticket of the lease it runs under. */
export interface SpawnRequest extends LaunchLine {
  ticket: string;
}

/** A warden's lease, and the agents its worker started under it. */
interface Lease {
  socket: Socket;
  ticket: Buffer;
  lastPulseAt: number;
  toleranceMs: number;
  agents: Set<LaunchedAgent>;
}

/**
 * The agent host (docs/adr/0045): in a container of its own beside the workers, holding none of their
 * secrets, it starts agent processes for them over a Unix socket and carries invariant I9 there. Each
 * worker's warden holds a lease of its own; the host answers it with a ticket only that worker learns
 * (through its warden, never through a file or the environment), and starts an agent only for a spawn
 * that carries a live lease's ticket. So an agent that finds the socket cannot start agents of its own
 * outside any worker's accounting. The host kills a worker's agents, and everything they started, when
 * its lease breaks or stalls or its warden revokes it, and each agent alone when that agent's own
 * connection breaks.
 */
export class AgentHost {
  readonly #options: AgentHostOptions;
  readonly #logger: LogSink;
  readonly #agents = new Map<Socket, LaunchedAgent>();
  readonly #leases = new Map<Socket, Lease>();
  #server: Server | undefined;
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
    this.#ticker = setInterval(() => this.#checkLeases(), 100);
    this.#logger.info(
      { socket: this.#options.socketPath, isolation: this.#options.sandbox.describe },
      'agent host listening',
    );
  }

  /** Kills every agent and stops listening. */
  async close(): Promise<void> {
    clearInterval(this.#ticker);
    await this.#kill([...this.#agents.values()], 'the agent host stops');
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
          if (role === 'lease') this.#grantLease(socket, json<LeaseRequest>(frame));
          else if (frame.kind === FRAME.spawn) void this.#spawn(socket, json<SpawnRequest>(frame));
          else socket.destroy();
        } else if (role === 'lease') this.#onLeaseFrame(socket, frame);
        else this.#onAgentFrame(socket, frame);
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      const lease = this.#leases.get(socket);
      if (lease) void this.#leaseLost(lease, 'the warden’s connection closed');
      const agent = this.#agents.get(socket);
      // The worker's end is gone (it died, or dropped the agent): the agent must not run on for nobody.
      if (agent?.running) {
        this.#logger.warn({ pid: agent.pid }, 'agent connection closed while the agent ran; killing it');
        agent.killAll();
      }
    });
  }

  #grantLease(socket: Socket, request: LeaseRequest): void {
    const ticket = randomBytes(32);
    this.#leases.set(socket, {
      socket,
      ticket,
      lastPulseAt: performance.now(),
      toleranceMs: request.toleranceMs,
      agents: new Set(),
    });
    socket.write(encodeFrame(FRAME.lease, { ticket: ticket.toString('base64url') }));
    this.#logger.info(
      { toleranceMs: request.toleranceMs, leases: this.#leases.size },
      'a warden holds a lease; its worker’s agents may start',
    );
  }

  /** The live lease whose ticket this is; compared in constant time, as any secret is. */
  #leaseOf(ticket: unknown): Lease | undefined {
    if (typeof ticket !== 'string') return undefined;
    const offered = Buffer.from(ticket, 'base64url');
    for (const lease of this.#leases.values()) {
      if (offered.length === lease.ticket.length && timingSafeEqual(offered, lease.ticket)) return lease;
    }
    return undefined;
  }

  #isolation(): HostIsolation {
    const { kind, describe, roomsMove } = this.#options.sandbox;
    // A sandbox shows every room at one path; without one, a session opens in its room's own path.
    const workspace = roomsMove ? this.#options.sandbox.sessionCwd({ workspace: '', home: '' }) : null;
    return { kind, describe, workspace, roomsMove };
  }

  #onLeaseFrame(socket: Socket, frame: Frame): void {
    const lease = this.#leases.get(socket);
    if (!lease) return;
    if (frame.kind === FRAME.pulse) lease.lastPulseAt = performance.now();
    else if (frame.kind === FRAME.revoke) {
      void this.#kill([...lease.agents], 'the warden revoked its worker').then((survivors) =>
        socket.write(encodeFrame(FRAME.revoked, { survivors })),
      );
    }
  }

  #checkLeases(): void {
    const now = performance.now();
    for (const lease of this.#leases.values()) {
      if (now - lease.lastPulseAt > lease.toleranceMs) {
        void this.#leaseLost(lease, `no pulse from the warden for ${lease.toleranceMs} ms`);
      }
    }
  }

  async #leaseLost(lease: Lease, why: string): Promise<void> {
    if (!this.#leases.delete(lease.socket)) return;
    lease.socket.destroy();
    const killed = lease.agents.size;
    await this.#kill([...lease.agents], why);
    this.#logger.error(
      { why, killed },
      'a worker’s lease is gone: killed its agents; none starts for it until its warden takes a lease again',
    );
  }

  /** SIGKILL to these agents and what they started; the pids still running after a bound. */
  async #kill(agents: readonly LaunchedAgent[], why: string): Promise<number[]> {
    for (const agent of agents) agent.killAll();
    await Promise.race([
      Promise.all(agents.map((agent) => agent.exit)),
      new Promise((r) => setTimeout(r, 2000)),
    ]);
    const survivors = stillRunning(agents.map((agent) => agent.pid));
    if (agents.length > 0) this.#logger.warn({ why, killed: agents.length, survivors }, 'agents killed');
    return survivors;
  }

  async #spawn(socket: Socket, request: SpawnRequest): Promise<void> {
    const { ticket, ...line } = request;
    const lease = this.#leaseOf(ticket);
    if (!lease) {
      const message =
        this.#leases.size === 0
          ? 'no worker holds this agent host’s lease: agents start only while a warden pulses'
          : 'refused: the spawn carries no live lease’s ticket; only a worker whose warden holds a lease starts agents';
      if (this.#leases.size > 0)
        this.#logger.warn({ command: line.command }, 'agent host refused a spawn without a lease ticket');
      socket.end(encodeFrame(FRAME.failed, { message }));
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
    if (socket.destroyed || !this.#leases.has(lease.socket)) {
      agent.killAll();
      return;
    }
    this.#agents.set(socket, agent);
    lease.agents.add(agent);
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
    lease.agents.delete(agent);
    if (!socket.destroyed) socket.end(encodeFrame(FRAME.exit, exit));
  }

  #onAgentFrame(socket: Socket, frame: Frame): void {
    const agent = this.#agents.get(socket);
    if (!agent) return;
    if (frame.kind === FRAME.stdin) agent.stdin.write(frame.payload);
    else if (frame.kind === FRAME.stdinEnd) agent.stdin.end();
    else if (frame.kind === FRAME.terminate) agent.terminate();
    else if (frame.kind === FRAME.killAll) agent.killAll();
    else if (frame.kind === FRAME.measure) {
      void agent.memory().then((bytes) => {
        if (!socket.destroyed) socket.write(encodeFrame(FRAME.measured, { pssBytes: bytes ?? null }));
      });
    }
  }
}
