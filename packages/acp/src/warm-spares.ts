import type { LogSink } from '@tributary/observability';
import type { AgentProcess } from './agent-process.js';
import { SpareSizing } from './spare-sizing.js';

export interface WarmSparesOptions {
  /** Spares kept ready however quiet it is (`AGENT_WARM_SPARES`). */
  floor: number;
  /** Bytes all spares may take together; 0 keeps exactly `floor` (docs/adr/0047). */
  memoryBudget: number;
  /** Spares that all went unused for this long are one too many: one is stopped, down to the floor. */
  shrinkAfterMs: number;
  /** Starts one agent process, or fails; the caller counts and reports failures. */
  start: () => Promise<AgentProcess>;
  /** Stops a spare no longer wanted. */
  stop: (agent: AgentProcess) => void;
  /** Whether one more spare may start now; the pool calls fill() again whenever that may change. */
  hasRoom: () => boolean;
  /** Spares started at once, at most. */
  maxStarting: number;
  /** A new thread found no spare ready. */
  onMissed?: () => void;
  logger: LogSink;
}

interface Waiter {
  resolve: (agent: AgentProcess | undefined) => void;
  reject: (error: unknown) => void;
}

/**
 * Agent processes started ahead of need, so a new thread's first prompt waits for `session/new` only,
 * not for a process to start and initialize. Each spare is handed out once, to one thread, and replaced
 * in the background. How many are kept follows the arrivals of new threads (SpareSizing): a thread
 * that finds none ready raises the aim and waits for the next spare to finish starting, which is never
 * later than a start of its own would be. A failed start is not retried on its own: the next thread
 * tries again, so an agent that cannot start costs one attempt per new thread, not a busy loop.
 */
export class WarmSpares {
  readonly #options: WarmSparesOptions;
  readonly #sizing: SpareSizing;
  readonly #ready: AgentProcess[] = [];
  /** Threads waiting for a spare that is starting, oldest first. */
  readonly #waiting: Waiter[] = [];
  #starting = 0;
  #closed = false;
  /**
   * A spare failed to start or died unused: no more are started on their own until a thread takes
   * one, so an agent that cannot run costs one start per new thread, never a loop.
   */
  #broken = false;
  /** The fewest spares ready at any moment since the last look: that many went unused. */
  #unused = 0;
  #shrinkTimer: NodeJS.Timeout | undefined;
  #measuring = false;
  /** A live spare's memory could not be read: said once. */
  #unmeasured = false;

  constructor(options: WarmSparesOptions) {
    this.#options = options;
    this.#sizing = new SpareSizing(options.floor, options.memoryBudget);
  }

  /** Spares ready now. */
  get ready(): number {
    return this.#ready.length;
  }

  /** Spares aimed at now. */
  get target(): number {
    return this.#sizing.target;
  }

  /** The most spares the memory budget pays for. */
  get ceiling(): number {
    return this.#sizing.ceiling;
  }

  /** What one spare was measured to cost, in bytes. */
  get bytesPerSpare(): number | undefined {
    return this.#sizing.bytesPerSpare;
  }

  /**
   * A spare for a new thread: a ready one, else the next one to finish starting when more are starting
   * than threads already wait for; undefined when none is coming (the caller starts a process of its
   * own). Rejects with the start error of the spare it waited for.
   */
  claim(): Promise<AgentProcess | undefined> {
    let spare = this.#ready.shift();
    while (spare && !spare.alive) spare = this.#ready.shift();
    this.#unused = Math.min(this.#unused, this.#ready.length);
    this.#broken = false;
    if (!spare) this.#missed();
    this.fill();
    if (spare) return Promise.resolve(spare);
    if (this.#waiting.length >= this.#starting) return Promise.resolve(undefined);
    return new Promise((resolve, reject) => this.#waiting.push({ resolve, reject }));
  }

  /** Starts spares until the aim is ready or starting, as far as the pool's cap allows. */
  fill(): void {
    while (
      !this.#closed &&
      !this.#broken &&
      this.#ready.length + this.#starting < this.#sizing.target &&
      this.#starting < this.#options.maxStarting &&
      this.#options.hasRoom()
    ) {
      this.#starting++;
      void this.#startOne();
    }
  }

  /** Whether another spare is wanted now (none is while closed). */
  get wanted(): boolean {
    return !this.#closed && this.#ready.length + this.#starting < this.#sizing.target;
  }

  /**
   * Keeps a process started for another reason (reading the agent's capabilities, a probe) as a spare,
   * or hands it to a thread waiting for one. A start that worked ends a spell of failed ones: spares
   * are started on their own again.
   */
  adopt(agent: AgentProcess): void {
    if (this.#closed) return;
    this.#broken = false;
    const waiter = this.#waiting.shift();
    if (waiter) {
      waiter.resolve(agent);
      return;
    }
    this.#ready.push(agent);
    void agent.exited.then(() => this.#forget(agent));
    if (this.#sizing.bytesPerSpare === undefined) void this.#measure(agent);
  }

  /** No more spares; the pool's supervisor stops the processes themselves. */
  close(): void {
    this.#closed = true;
    this.#ready.length = 0;
    clearInterval(this.#shrinkTimer);
    for (const waiter of this.#waiting.splice(0)) waiter.resolve(undefined);
  }

  async #startOne(): Promise<void> {
    let agent: AgentProcess;
    try {
      agent = await this.#options.start();
    } catch (error) {
      this.#broken = true;
      this.#options.logger.debug({ err: error }, 'warm spare agent did not start');
      // The thread that waited longest for this start fails with it, as if the start had been its own.
      this.#waiting.shift()?.reject(error);
      return;
    } finally {
      this.#starting--;
    }
    this.adopt(agent);
    // Its start slot is free again: the next spare may take it.
    this.fill();
  }

  #missed(): void {
    this.#options.onMissed?.();
    if (!this.#sizing.missed()) return;
    this.#options.logger.info(
      { target: this.#sizing.target, ceiling: this.#sizing.ceiling },
      'a new thread found no warm spare ready; keeping one more',
    );
    this.#shrinkTimer ??= setInterval(() => this.#shrinkIfUnused(), this.#options.shrinkAfterMs).unref();
  }

  /**
   * Spares that stayed ready through a whole period were not needed: one fewer is kept. While spares
   * are still starting the pool has not reached its aim, and cannot tell what it did not need.
   */
  #shrinkIfUnused(): void {
    // Measured again while the budget is what bounds the pool, at a quiet moment: a look at /proc
    // costs the event loop milliseconds, never spent as a thread takes its spare.
    const sample = this.#ready.at(-1);
    if (sample) void this.#measure(sample);
    if (this.#starting > 0) return;
    const unused = this.#unused;
    this.#unused = this.#ready.length;
    if (unused === 0 || !this.#sizing.shrink()) return;
    const surplus = this.#ready.length + this.#starting - this.#sizing.target;
    const spare = surplus > 0 ? this.#ready.shift() : undefined;
    if (spare) this.#options.stop(spare);
    this.#unused = this.#ready.length;
    this.#options.logger.info({ target: this.#sizing.target }, 'warm spares went unused; keeping one fewer');
    if (this.#sizing.target <= this.#sizing.floor) {
      clearInterval(this.#shrinkTimer);
      this.#shrinkTimer = undefined;
    }
  }

  /** Measures a ready spare, once at a time: the first at once, later ones once a period at most. */
  async #measure(agent: AgentProcess): Promise<void> {
    if (this.#measuring) return;
    this.#measuring = true;
    try {
      const bytes = await agent.memory().catch(() => undefined);
      if (this.#closed) return;
      if (bytes !== undefined) this.#sizing.measured(bytes);
      else if (agent.alive && this.#sizing.bytesPerSpare === undefined && !this.#unmeasured) {
        // Not silent: without a cost the pool cannot grow past its floor.
        this.#unmeasured = true;
        this.#options.logger.warn(
          { pid: agent.pid, floor: this.#sizing.floor },
          'a warm spare could not be measured; spares stay at AGENT_WARM_SPARES until one is',
        );
      }
    } finally {
      this.#measuring = false;
    }
  }

  #forget(agent: AgentProcess): void {
    const index = this.#ready.indexOf(agent);
    if (index < 0) return;
    this.#ready.splice(index, 1);
    this.#unused = Math.min(this.#unused, this.#ready.length);
    this.#broken = true;
    this.#options.logger.warn({ pid: agent.pid }, 'a warm spare agent exited before it was used');
  }
}
