import type { AnsweredSession } from '../batch.js';
import type { RedisClient } from '../connections.js';
import type { KeysOf } from './keys-of.js';

/** A thread's agent session as last persisted by a worker (session continuity, docs/adr/0007). */
export interface SessionRecord extends AnsweredSession {
  /** The worker that last held the session live. */
  worker: string;
  /** The fence of the lease whose commit recorded it (0 for a record older than that field). */
  fence: number;
  /** When it was recorded (ms since the epoch, Redis's clock). */
  savedAt: number;
}

/**
 * One hash per thread, written by the commit script (it expires `idleTtlMs` after that) and read here
 * alone.
 */
export class SessionRecords {
  constructor(
    private readonly redis: RedisClient,
    private readonly keysOf: KeysOf,
  ) {}

  async get(thread: string): Promise<SessionRecord | undefined> {
    const fields = await this.redis.hgetall(this.keysOf(thread).session);
    if (fields.sessionId === undefined) return undefined;
    return {
      sessionId: fields.sessionId,
      agent: fields.agent ?? '',
      cwd: fields.cwd ?? '',
      generation: Number(fields.generation ?? 0),
      worker: fields.worker ?? '',
      fence: Number(fields.fence ?? 0),
      savedAt: Number(fields.savedAt ?? 0),
    };
  }
}
