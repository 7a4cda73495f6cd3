import { connect, type Socket } from 'node:net';
import { encodeFrame, FRAME, type Frame, FrameReader, json } from './frames.js';

const RECONNECT_MS = 500;

/**
 * The warden's hold on an agent host (docs/adr/0045): the host runs agents only while it holds the
 * lease, and kills them all when its pulses stop for `toleranceMs` or its connection breaks. The warden
 * pulses only while its worker does, so a worker that dies, freezes or loses its warden has its agents
 * killed by the host as well as by the warden's revocation.
 */
export class HostLease {
  #socket: Socket | undefined;
  #held = false;
  #closed = false;
  #onRevoked: ((survivors: number[]) => void) | undefined;
  readonly ready: Promise<void>;
  #resolveReady!: () => void;

  constructor(
    private readonly socketPath: string,
    private readonly toleranceMs: number,
    private readonly log: (level: 'info' | 'warn', msg: string, fields?: Record<string, unknown>) => void,
  ) {
    this.ready = new Promise((resolve) => {
      this.#resolveReady = resolve;
    });
    this.#connect();
  }

  /** The worker is alive: the host keeps its agents running for another `toleranceMs`. */
  pulse(): void {
    if (this.#held) this.#socket?.write(encodeFrame(FRAME.pulse));
  }

  /**
   * Has the host kill every agent now and resolves with those still running after its bound. A lease
   * already broken resolves at once with none: the host killed them when it broke.
   */
  revoke(timeoutMs = 5000): Promise<number[]> {
    const socket = this.#socket;
    if (!this.#held || !socket || socket.destroyed) return Promise.resolve([]);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        // No answer: dropping the lease makes the host kill them all the same.
        socket.destroy();
        resolve([]);
      }, timeoutMs);
      this.#onRevoked = (survivors) => {
        clearTimeout(timer);
        resolve(survivors);
      };
      socket.write(encodeFrame(FRAME.revoke));
    });
  }

  close(): void {
    this.#closed = true;
    this.#socket?.end();
  }

  #connect(): void {
    const socket = connect(this.socketPath);
    const reader = new FrameReader();
    this.#socket = socket;
    socket.on('connect', () => socket.write(encodeFrame(FRAME.lease, { toleranceMs: this.toleranceMs })));
    socket.on('data', (chunk: Buffer) => {
      for (const frame of reader.push(chunk)) this.#onFrame(frame);
    });
    socket.on('error', (error) =>
      this.log('warn', 'agent host lease connection failed', { err: error.message }),
    );
    socket.on('close', () => {
      const held = this.#held;
      this.#held = false;
      this.#onRevoked?.([]);
      if (this.#closed) return;
      if (held)
        this.log('warn', 'agent host lease lost: the host killed this worker’s agents; taking it again');
      setTimeout(() => this.#connect(), RECONNECT_MS).unref();
    });
  }

  #onFrame(frame: Frame): void {
    if (frame.kind === FRAME.lease) {
      this.#held = true;
      this.#resolveReady();
      this.log('info', 'agent host lease held', { socket: this.socketPath });
    } else if (frame.kind === FRAME.revoked) {
      this.#onRevoked?.(json<{ survivors: number[] }>(frame).survivors);
      this.#onRevoked = undefined;
    }
  }
}
