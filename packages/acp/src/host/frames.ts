/**
 * The wire between a worker and its agent host (docs/adr/0045): length-prefixed frames over a Unix
 * socket, one byte of kind, four of length (big-endian), then the payload. One connection per agent
 * process carries its stdin, stdout and stderr, its signals and its exit; one more, the warden's, holds
 * the lease under which the host runs agents at all.
 */
export const FRAME = {
  // Worker to host, on an agent's connection.
  spawn: 1,
  stdin: 2,
  stdinEnd: 3,
  terminate: 4,
  killAll: 5,
  measure: 6,
  // Host to worker, on an agent's connection.
  spawned: 11,
  failed: 12,
  stdout: 13,
  stderr: 14,
  exit: 15,
  measured: 16,
  // Either way: what isolation the host's agents get, asked by a worker at start.
  hello: 20,
  // The warden's connection.
  lease: 21,
  pulse: 22,
  revoke: 23,
  revoked: 24,
} as const;

export type FrameKind = (typeof FRAME)[keyof typeof FRAME];

export interface Frame {
  kind: FrameKind;
  payload: Buffer;
}

const HEADER = 5;
/** No frame this long is ever sent: a length past it means the stream is not ours. */
const MAX_FRAME = 64 * 1024 * 1024;

export function encodeFrame(kind: FrameKind, payload: Buffer | string | object = Buffer.alloc(0)): Buffer {
  const body = Buffer.isBuffer(payload)
    ? payload
    : Buffer.from(typeof payload === 'string' ? payload : JSON.stringify(payload));
  const header = Buffer.alloc(HEADER);
  header.writeUInt8(kind, 0);
  header.writeUInt32BE(body.length, 1);
  return Buffer.concat([header, body]);
}

/** Reads frames out of chunks as they arrive, however the stream cut them. */
export class FrameReader {
  #pending: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Frame[] {
    this.#pending = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    const frames: Frame[] = [];
    while (this.#pending.length >= HEADER) {
      const length = this.#pending.readUInt32BE(1);
      if (length > MAX_FRAME) throw new Error(`frame of ${length} bytes: not an agent host stream`);
      if (this.#pending.length < HEADER + length) break;
      frames.push({
        kind: this.#pending.readUInt8(0) as FrameKind,
        payload: this.#pending.subarray(HEADER, HEADER + length),
      });
      this.#pending = this.#pending.subarray(HEADER + length);
    }
    return frames;
  }
}

export const json = <T>(frame: Frame): T => JSON.parse(frame.payload.toString('utf8')) as T;
