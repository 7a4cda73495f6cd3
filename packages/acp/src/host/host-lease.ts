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
  #ticket: string | undefined;
  /** The failure said last: an absent host is named once, not at every reconnect. */
  #failure: string | undefined;
  #closed = false;
  #onRevoked: ((survivors: number[]) => void) | undefined;
  readonly ready: Promise<void>;
  #resolveReady!: () => void;

  constructor(
    private readonly socketPath: string,
    private readonly toleranceMs: number,
    private readonly log: (level: 'info' | 'warn', msg: string, fields?: Record<string, unknown>) => void,
    /** Each time the host grants the lease: the ticket its worker's spawns must carry. */
    private readonly onTicket: (ticket: string) => void = () => {},
  ) {
    this.ready = new Promise((resolve) => {
      this.#resolveReady = resolve;
    });
    this.#connect();
  }

  /** The ticket of the lease held now: spawns carrying it run under this lease. */
  get ticket(): string | undefined {
    return this.#ticket;
  }

  /** The worker is alive: the host keeps its agents running for another `toleranceMs`. */
  pulse(): void {
    if (this.#ticket) this.#socket?.write(encodeFrame(FRAME.pulse));
  }

  /**
   * Has the host kill every agent now and resolves with those still running after its bound. A lease
   * already broken resolves at once with none: the host killed them when it broke.
   */
  revoke(timeoutMs = 5000): Promise<number[]> {
    const socket = this.#socket;
    if (!this.#ticket || !socket || socket.destroyed) return Promise.resolve([]);
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
    // A reconnect due after close() must not take the lease again for nobody.
    if (this.#closed) return;
    const socket = connect(this.socketPath);
    const reader = new FrameReader();
    this.#socket = socket;
    socket.on('connect', () => socket.write(encodeFrame(FRAME.lease, { toleranceMs: this.toleranceMs })));
    socket.on('data', (chunk: Buffer) => {
      for (const frame of reader.push(chunk)) this.#onFrame(frame);
    });
    socket.on('error', (error) => {
      if (error.message === this.#failure) return;
      this.#failure = error.message;
      this.log('warn', 'agent host lease connection failed; no agent starts until it is taken again', {
        socket: this.socketPath,
        err: error.message,
      });
    });
    socket.on('close', () => {
      const held = this.#ticket !== undefined;
      this.#ticket = undefined;
      this.#onRevoked?.([]);
      if (this.#closed) return;
      if (held)
        this.log('warn', 'agent host lease lost: the host killed this worker’s agents; taking it again');
      setTimeout(() => this.#connect(), RECONNECT_MS).unref();
    });
  }

  #onFrame(frame: Frame): void {
    if (frame.kind === FRAME.lease) {
      this.#ticket = json<{ ticket: string }>(frame).ticket;
      this.#failure = undefined;
      this.onTicket(this.#ticket);
      this.#resolveReady();
      this.log('info', 'agent host lease held', { socket: this.socketPath });
    } else if (frame.kind === FRAME.revoked) {
      this.#onRevoked?.(json<{ survivors: number[] }>(frame).survivors);
      this.#onRevoked = undefined;
    }
  }
}
