import type { LogSink } from '@tributary/observability';
import type { AgentProcess } from './agent-process.js';

export interface WarmSparesOptions {
  /** Spares to keep ready: started, initialized and signed in, holding no session. */
  target: number;
  /** Starts one agent process, or fails; the caller counts and reports failures. */
  start: () => Promise<AgentProcess>;
  /** Whether one more process fits under the pool's cap now. */
  hasRoom: () => boolean;
  logger: LogSink;
}

/**
 * Agent processes started ahead of need, so a new thread's first prompt waits for `session/new` only,
 * not for a process to start and initialize. Each spare is handed out once, to one thread, and replaced
 * in the background. A failed start is not retried on its own: the next take tries again, so
 * an agent that cannot start costs one attempt per new thread, not a busy loop.
 */
export class WarmSpares {
  readonly #options: WarmSparesOptions;
  readonly #ready: AgentProcess[] = [];
  #starting = 0;
  #closed = false;
  /**
   * A spare failed to start or died unused: no more are started on their own until a thread takes
   * one, so an agent that cannot run costs one start per new thread, never a loop.
   */
  #broken = false;

  constructor(options: WarmSparesOptions) {
    this.#options = options;
  }

  /** Spares ready now. */
  get ready(): number {
    return this.#ready.length;
  }

  /** A ready spare, which is no longer a spare; a replacement starts in the background. */
  take(): AgentProcess | undefined {
    let spare = this.#ready.shift();
    while (spare && !spare.alive) spare = this.#ready.shift();
    this.#broken = false;
    this.fill();
    return spare;
  }

  /** Starts spares until the target is ready or starting, as far as the pool's cap allows. */
  fill(): void {
    while (
      !this.#closed &&
      !this.#broken &&
      this.#ready.length + this.#starting < this.#options.target &&
      this.#options.hasRoom()
    ) {
      this.#starting++;
      void this.#startOne();
    }
  }

  /** Whether another spare is wanted now (none is while closed). */
  get wanted(): boolean {
    return !this.#closed && this.#ready.length + this.#starting < this.#options.target;
  }

  /**
   * Keeps a process started for another reason (reading the agent's capabilities, a probe) as a spare.
   * A start that worked ends a spell of failed ones: spares are started on their own again.
   */
  adopt(agent: AgentProcess): void {
    if (this.#closed) return;
    this.#broken = false;
    this.#ready.push(agent);
    void agent.exited.then(() => this.#forget(agent));
  }

  /** No more spares; the pool's supervisor stops the processes themselves. */
  close(): void {
    this.#closed = true;
    this.#ready.length = 0;
  }

  async #startOne(): Promise<void> {
    let agent: AgentProcess;
    try {
      agent = await this.#options.start();
    } catch (error) {
      this.#broken = true;
      this.#options.logger.debug({ err: error }, 'warm spare agent did not start');
      return;
    } finally {
      this.#starting--;
    }
    this.adopt(agent);
  }

  #forget(agent: AgentProcess): void {
    const index = this.#ready.indexOf(agent);
    if (index < 0) return;
    this.#ready.splice(index, 1);
    this.#broken = true;
    this.#options.logger.warn({ pid: agent.pid }, 'a warm spare agent exited before it was used');
  }
}
