import type { OpenedSession, SessionPool } from '@tributary/acp';
import type { Redis } from 'ioredis';

export interface SessionKeys {
  session(thread: string): string;
}

/**
 * Keeps a thread on its agent session across turns, workers and restarts: the (session id, agent,
 * generation) last used is persisted per thread. A reset bumps the thread's generation, which
 * starts a fresh session.
 */
export class SessionContinuity {
  /** Generation of each session the pool holds live, so a turn on a live session costs no Redis call. */
  private readonly liveGeneration = new Map<string, number>();

  constructor(
    private readonly redis: Redis,
    private readonly keys: SessionKeys,
    private readonly pool: SessionPool,
    /** Identifies the agent command; a session id is meaningless to a different agent. */
    private readonly agentId: string,
  ) {}

  async attach(thread: string, generation: number): Promise<OpenedSession> {
    if (this.pool.has(thread)) {
      if (this.liveGeneration.get(thread) === generation) {
        return { sessionId: this.pool.sessionIdOf(thread)!, path: 'live' };
      }
      await this.pool.release(thread);
    }
    const key = this.keys.session(thread);
    const saved = await this.redis.hgetall(key);
    const resumable =
      saved.sessionId !== undefined &&
      saved.agent === this.agentId &&
      Number(saved.generation) === generation;
    const opened = resumable
      ? await this.pool.loadOrResume(thread, saved.sessionId!)
      : await this.pool.open(thread);
    if (!resumable || opened.sessionId !== saved.sessionId) {
      await this.redis.hset(key, { sessionId: opened.sessionId, agent: this.agentId, generation });
    }
    // Sessions the pool evicted no longer need their entry; pruning here keeps the map at pool size.
    for (const held of this.liveGeneration.keys()) if (!this.pool.has(held)) this.liveGeneration.delete(held);
    this.liveGeneration.set(thread, generation);
    return opened;
  }
}
