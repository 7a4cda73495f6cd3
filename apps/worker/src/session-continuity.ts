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
  constructor(
    private readonly redis: Redis,
    private readonly keys: SessionKeys,
    private readonly pool: SessionPool,
    /** Identifies the agent command; a session id is meaningless to a different agent. */
    private readonly agentId: string,
  ) {}

  async attach(thread: string, generation: number): Promise<OpenedSession> {
    const key = this.keys.session(thread);
    const saved = await this.redis.hgetall(key);
    const sameLine = saved.agent === this.agentId && Number(saved.generation ?? 0) === generation;
    if (this.pool.has(thread)) {
      if (sameLine) return { sessionId: this.pool.sessionIdOf(thread)!, path: 'live' };
      await this.pool.release(thread);
    }
    const opened =
      sameLine && saved.sessionId
        ? await this.pool.loadOrResume(thread, saved.sessionId)
        : await this.pool.open(thread);
    if (opened.sessionId !== saved.sessionId || !sameLine) {
      await this.redis.hset(key, { sessionId: opened.sessionId, agent: this.agentId, generation });
    }
    return opened;
  }
}
