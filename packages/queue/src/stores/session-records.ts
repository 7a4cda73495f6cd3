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
  /** When it was saved (ms since the epoch, the worker's clock). */
  savedAt: number;
}

/** One hash per thread; no other code knows its fields. */
export class SessionRecords {
  constructor(
    private readonly redis: RedisClient,
    private readonly keysOf: KeysOf,
    /** A record outlives its thread's last save by this much (the queue's `idleTtlMs`). */
    private readonly ttlMs: number,
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
      savedAt: Number(fields.savedAt ?? 0),
    };
  }

  async save(thread: string, record: SessionRecord): Promise<void> {
    const key = this.keysOf(thread).session;
    await this.redis
      .multi()
      .hset(key, { ...record })
      .pexpire(key, this.ttlMs)
      .exec();
  }
}
