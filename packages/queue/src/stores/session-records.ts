import type { RedisClient } from '../connections.js';
import type { KeysOf } from './keys-of.js';

/** A thread's agent session as last persisted by a worker (session continuity, docs/adr/0007). */
export interface SessionRecord {
  sessionId: string;
  /** The agent command: a session id is meaningless to a different agent. */
  agent: string;
  /** The agent's working directory: a session belongs to the directory it was opened in. */
  cwd: string;
  /** The thread's session generation when it was saved; `reset` bumps it. */
  generation: number;
  /** The worker that last held the session live. */
  worker: string;
  /** The fence of the lease whose commit recorded it (0 for a record older than that field). */
  fence: number;
  /** When it was recorded (ms since the epoch, Redis's clock). */
  savedAt: number;
}

/**
 * What a turn reports of the session it was answered on; its commit records it with the lease's owner
 * and fence (commit-13.lua), so only the lease holder's record lands and it costs no call of its own.
 */
export type AnsweredSession = Pick<SessionRecord, 'sessionId' | 'agent' | 'cwd' | 'generation'>;

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
