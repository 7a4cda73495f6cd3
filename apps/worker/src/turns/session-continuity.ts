import type { OpenedSession, SessionPool } from '@tributary/acp';
import type { AnsweredSession, Lease, SessionRecords } from '@tributary/queue';

export interface SessionIdentity {
  /** Identifies the agent command; a session id is meaningless to a different agent. */
  agent: string;
  /** The thread's working directory; a session belongs to the directory it was opened in. */
  cwd: (thread: string) => string;
  /** Called when a thread's saved session predates a reset, before its fresh session opens. */
  onReset?: (thread: string) => Promise<void>;
  /** Called when this worker takes a thread that another worker ran last, naming that worker. */
  onMoved?: (thread: string, from: string) => void;
  /**
   * Called before every turn uses the thread's room, after a reset has cleaned it: throws to hold
   * the turn back (a room over its disk budget, docs/adr/0046).
   */
  admit?: (thread: string) => Promise<void>;
}

/** A session this worker holds live for a thread. */
interface HeldSession {
  sessionId: string;
  generation: number;
  /** Fence of the last lease this worker ran the thread under. */
  fence: number;
  /** Whether Redis records this session as held by this worker, or a turn's commit will. */
  saved: boolean;
}

/**
 * Keeps a thread on its agent session across turns, workers and restarts. Redis keeps (agent, session
 * id, cwd, generation, worker) per thread; a worker without the live session tries session/resume,
 * then session/load, then a new session (`path: 'new'`, which the caller seeds with the history). A
 * reset bumps the generation, which starts a fresh session.
 *
 * A session is recorded only by the commit of a turn answered on it (`answered`): a worker that dies
 * before that leaves the previous record, so the next worker does not resume a session that never got
 * its seed, and a worker fenced out records nothing.
 */
export class SessionContinuity {
  private readonly held = new Map<string, HeldSession>();

  constructor(
    private readonly records: SessionRecords,
    private readonly pool: SessionPool,
    private readonly identity: SessionIdentity,
  ) {}

  /**
   * The thread's session for a turn under `lease`. `fresh`: a new session even where one could be
   * reused or resumed (the caller seeds it), because that one may hold this batch already or is broken.
   */
  async attach(thread: string, generation: number, lease: Lease, fresh = false): Promise<OpenedSession> {
    const live = this.pool.has(thread) ? this.held.get(thread) : undefined;
    if (!fresh && live?.generation === generation && (await this.stillOurs(thread, live, lease))) {
      await this.identity.admit?.(thread);
      live.fence = lease.fence;
      return { sessionId: live.sessionId, path: 'live' };
    }
    if (this.pool.has(thread)) await this.pool.release(thread);

    const saved = await this.records.get(thread);
    if (saved !== undefined && saved.worker !== lease.owner) this.identity.onMoved?.(thread, saved.worker);
    if (saved !== undefined && saved.generation < generation) await this.identity.onReset?.(thread);
    await this.identity.admit?.(thread);
    const resumable =
      !fresh &&
      saved !== undefined &&
      saved.agent === this.identity.agent &&
      saved.cwd === this.identity.cwd(thread) &&
      saved.generation === generation;
    const opened = resumable
      ? await this.pool.loadOrResume(thread, saved.sessionId)
      : await this.pool.open(thread);
    const alreadySaved = opened.sessionId === saved?.sessionId && saved.worker === lease.owner;
    // Sessions the pool evicted no longer need their entry; pruning here keeps the map at pool size.
    for (const other of this.held.keys()) if (!this.pool.has(other)) this.held.delete(other);
    this.held.set(thread, {
      sessionId: opened.sessionId,
      generation,
      fence: lease.fence,
      saved: alreadySaved,
    });
    return opened;
  }

  /**
   * After a prompt on the thread's session was answered: the session for the turn's commit to record as
   * this worker's, unless the record names it already.
   */
  answered(thread: string): AnsweredSession | undefined {
    const held = this.held.get(thread);
    if (!held || held.saved) return undefined;
    held.saved = true;
    return {
      sessionId: held.sessionId,
      agent: this.identity.agent,
      cwd: this.identity.cwd(thread),
      generation: held.generation,
    };
  }

  /**
   * Closes the live sessions of threads that Redis now records under another worker: the thread moved,
   * and its session (an agent process) is of no use here. Sessions being opened or running a turn
   * (`busy`) are left alone: their turn decides. The check behind a lost `moved` message.
   */
  async releaseMoved(owner: string, busy: (thread: string) => boolean): Promise<number> {
    const candidates = [...this.held].filter(
      ([thread, held]) => held.saved && this.pool.has(thread) && !busy(thread),
    );
    let released = 0;
    for (const [thread, held] of candidates) {
      const saved = await this.records.get(thread);
      // A record from before our lease's fence is one our commit has not replaced yet, not a move.
      const movedOn = saved !== undefined && saved.worker !== owner && saved.fence > held.fence;
      if (!movedOn || this.held.get(thread) !== held || busy(thread)) continue;
      await this.release(thread);
      released++;
    }
    return released;
  }

  /**
   * Closes the live sessions of threads whose keys expired: such a thread starts afresh, and its room
   * is deleted (docs/adr/0046). Sessions running a turn (`busy`) are left alone.
   */
  async releaseExpired(
    expired: (thread: string) => Promise<boolean>,
    busy: (thread: string) => boolean,
  ): Promise<number> {
    let released = 0;
    for (const thread of [...this.held.keys()].filter((held) => this.pool.has(held))) {
      if (busy(thread) || !(await expired(thread)) || busy(thread)) continue;
      await this.release(thread);
      released++;
    }
    return released;
  }

  /** Forgets the thread's session here and closes it (its agent process stops). */
  async release(thread: string): Promise<void> {
    this.held.delete(thread);
    await this.pool.release(thread);
  }

  /**
   * A live session is current unless another worker ran the thread since our last turn. Claims only
   * raise the fence, so our fence (the next batch of our lease) or the next one means nobody else
   * claimed in between. A lower one means the thread's keys expired and it started afresh, its room
   * perhaps deleted (docs/adr/0046); then, as otherwise, Redis says whether the session is still ours.
   */
  private async stillOurs(thread: string, held: HeldSession, lease: Lease): Promise<boolean> {
    if (lease.fence === held.fence || lease.fence === held.fence + 1) return true;
    const saved = await this.records.get(thread);
    return saved?.sessionId === held.sessionId && saved.worker === lease.owner;
  }
}
