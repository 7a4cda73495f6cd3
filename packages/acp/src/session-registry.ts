import type { Cost, StopReason } from '@agentclientprotocol/sdk';
import type { AgentProcess } from './agent-process.js';
import { SessionCapacityError } from './errors.js';
import type { ActiveTurn } from './turn.js';

export interface PooledSession {
  readonly threadKey: string;
  readonly sessionId: string;
  readonly agent: AgentProcess;
  lastUsed: number;
  turn: ActiveTurn | undefined;
  /** How the session's last turn ended, if it had one. */
  lastStopReason: StopReason | undefined;
  /**
   * The session's cost so far as the agent last reported it; zero for a session opened new here,
   * unknown for one reopened from an earlier process until its first report.
   */
  cost: Cost | 'zero' | undefined;
}

/** The live sessions of a pool by thread key, with their recency for least-recently-used eviction. */
export class SessionRegistry {
  readonly #maxSessions: number;
  readonly #sessions = new Map<string, PooledSession>();
  #clock = 0;

  constructor(maxSessions: number) {
    this.#maxSessions = maxSessions;
  }

  /** Sessions held on a live agent process. */
  get liveCount(): number {
    let count = 0;
    for (const session of this.#sessions.values()) if (session.agent.alive) count++;
    return count;
  }

  /** The thread's session, unless its agent process has died (then it is forgotten). */
  get(threadKey: string): PooledSession | undefined {
    const session = this.#sessions.get(threadKey);
    if (session && !session.agent.alive) {
      this.#sessions.delete(threadKey);
      return undefined;
    }
    return session;
  }

  add(threadKey: string, sessionId: string, agent: AgentProcess, opened: 'new' | 'reopened'): PooledSession {
    const session: PooledSession = {
      threadKey,
      sessionId,
      agent,
      lastUsed: ++this.#clock,
      turn: undefined,
      lastStopReason: undefined,
      cost: opened === 'new' ? 'zero' : undefined,
    };
    this.#sessions.set(threadKey, session);
    return session;
  }

  /** Removes and returns the thread's session, alive or not. */
  take(threadKey: string): PooledSession | undefined {
    const session = this.#sessions.get(threadKey);
    this.#sessions.delete(threadKey);
    return session;
  }

  touch(session: PooledSession): void {
    session.lastUsed = ++this.#clock;
  }

  find(agent: AgentProcess, sessionId: string): PooledSession | undefined {
    for (const session of this.#sessions.values()) {
      if (session.agent === agent && session.sessionId === sessionId) return session;
    }
    return undefined;
  }

  forgetAgent(agent: AgentProcess): void {
    for (const session of this.#sessions.values()) {
      if (session.agent === agent) this.#sessions.delete(session.threadKey);
    }
  }

  clear(): void {
    this.#sessions.clear();
  }

  /**
   * Removes idle sessions, least recently used first, until `reserved` sessions being opened plus
   * one more fit under the cap; returns them for closing. Busy sessions are never evicted.
   */
  evictFor(reserved: number): PooledSession[] {
    const evicted: PooledSession[] = [];
    while (this.#sessions.size + reserved >= this.#maxSessions) {
      let victim: PooledSession | undefined;
      for (const session of this.#sessions.values()) {
        if (!session.turn && (!victim || session.lastUsed < victim.lastUsed)) victim = session;
      }
      if (!victim) throw new SessionCapacityError(this.#maxSessions);
      this.#sessions.delete(victim.threadKey);
      evicted.push(victim);
    }
    return evicted;
  }
}
