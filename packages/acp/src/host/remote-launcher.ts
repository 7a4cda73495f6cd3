import { connect, type Socket } from 'node:net';
import { PassThrough, Writable } from 'node:stream';
import { AgentStartError } from '../errors.js';
import type { AgentExit, AgentLauncher, LaunchedAgent, LaunchLine } from '../launch/launched-agent.js';
import { encodeFrame, FRAME, type Frame, FrameReader, json } from './frames.js';

/** What an agent host answers a spawn with. */
interface Spawned {
  pid: number;
}
interface Failed {
  message: string;
  code?: string;
}
interface Measured {
  pssBytes: number | null;
}

/**
 * An agent that runs in the agent host's container (docs/adr/0045), spoken to over its own connection
 * to the host's socket: its stdio, signals and exit travel as frames. The host kills it and everything
 * it started when the connection breaks, so an agent never outlives the worker that started it.
 */
class RemoteAgent implements LaunchedAgent {
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  readonly stdin: Writable;
  readonly exit: Promise<AgentExit>;
  #running = true;
  /** Measurements asked of the host, answered in order. */
  readonly #measuring: ((bytes: number | undefined) => void)[] = [];

  constructor(
    private readonly socket: Socket,
    readonly pid: number,
    settle: (onExit: (exit: AgentExit) => void) => void,
  ) {
    this.stdin = new Writable({
      write: (chunk: Buffer, _encoding, done) => {
        if (socket.destroyed) return done(new Error('agent host connection closed'));
        socket.write(encodeFrame(FRAME.stdin, chunk), () => done());
      },
      final: (done) => {
        if (!socket.destroyed) socket.write(encodeFrame(FRAME.stdinEnd));
        done();
      },
    });
    this.exit = new Promise((resolve) =>
      settle((exit) => {
        this.#running = false;
        for (const answer of this.#measuring.splice(0)) answer(undefined);
        this.stdout.end();
        this.stderr.end();
        socket.end();
        resolve(exit);
      }),
    );
  }

  get running(): boolean {
    return this.#running;
  }

  terminate(): void {
    if (!this.socket.destroyed) this.socket.write(encodeFrame(FRAME.terminate));
  }

  killAll(): void {
    if (!this.socket.destroyed) this.socket.write(encodeFrame(FRAME.killAll));
  }

  memory(): Promise<number | undefined> {
    if (!this.#running || this.socket.destroyed) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      this.#measuring.push(resolve);
      this.socket.write(encodeFrame(FRAME.measure));
    });
  }

  /** The host's answer to the oldest measurement asked. */
  measured({ pssBytes }: Measured): void {
    this.#measuring.shift()?.(pssBytes ?? undefined);
  }
}

/**
 * Starts agents through the agent host listening on `socketPath`, each under the lease whose ticket
 * `ticket` gives now (the warden's: it is renewed whenever the warden takes the lease again).
 */
export function remoteLauncher(socketPath: string, ticket: () => string | undefined): AgentLauncher {
  return {
    launch(line: LaunchLine): Promise<LaunchedAgent> {
      const held = ticket();
      if (held === undefined) {
        return Promise.reject(
          new AgentStartError(
            line.command,
            `this worker holds no lease on the agent host at ${socketPath} yet`,
          ),
        );
      }
      return new Promise((resolve, reject) => {
        const socket = connect(socketPath);
        const reader = new FrameReader();
        let agent: RemoteAgent | undefined;
        let onExit: ((exit: AgentExit) => void) | undefined;
        const fail = (message: string, cause?: Error) =>
          reject(new AgentStartError(line.command, message, cause ? { cause } : undefined));
        const handle = (frame: Frame) => {
          switch (frame.kind) {
            case FRAME.spawned:
              agent = new RemoteAgent(socket, json<Spawned>(frame).pid, (settle) => {
                onExit = settle;
              });
              resolve(agent);
              return;
            case FRAME.failed: {
              const { message, code } = json<Failed>(frame);
              fail(message, Object.assign(new Error(message), code ? { code } : {}));
              socket.destroy();
              return;
            }
            case FRAME.stdout:
              agent?.stdout.write(frame.payload);
              return;
            case FRAME.stderr:
              agent?.stderr.write(frame.payload);
              return;
            case FRAME.exit:
              onExit?.(json<AgentExit>(frame));
              return;
            case FRAME.measured:
              agent?.measured(json<Measured>(frame));
              return;
          }
        };
        socket.on('connect', () => socket.write(encodeFrame(FRAME.spawn, { ...line, ticket: held })));
        socket.on('data', (chunk: Buffer) => {
          try {
            for (const frame of reader.push(chunk)) handle(frame);
          } catch (error) {
            socket.destroy(error as Error);
          }
        });
        socket.on('error', (error) => {
          if (!agent) fail(`the agent host at ${socketPath} cannot be reached (${error.message})`, error);
        });
        // A connection gone without an exit: the host is gone, and its agents with it (its container).
        socket.on('close', () => {
          if (!agent) fail(`the agent host at ${socketPath} closed the connection`);
          else onExit?.({ code: null, signal: 'SIGKILL' });
        });
      });
    },
  };
}
