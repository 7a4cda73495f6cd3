import pLimit, { type LimitFunction } from 'p-limit';
import type { AgentInfo } from './agent-info.js';
import type { AgentProcess } from './agent-process.js';
import { PoolClosedError } from './errors.js';
import type { AgentRoom } from './sandbox/agent-sandbox.js';

/** Starts that failed in a row (spawn or `initialize`), and why the last one did; 0 after a success. */
export interface StartFailures {
  consecutive: number;
  lastError: string | undefined;
}

/** How an agent process ended: retired by its owner (eviction, release, close), or not. */
export interface AgentEnded {
  agent: AgentProcess;
  /** False for a crash, an exit of its own, or a kill after a cancel timeout. */
  retired: boolean;
}

export interface AgentSupervisorOptions {
  /** Spawns one agent process in `room` and completes `initialize`. */
  start: (room: AgentRoom) => Promise<AgentProcess>;
  onEnded: (ended: AgentEnded) => void;
  onStartFailed?: (failures: StartFailures) => void;
  /** Starts that run at once; later ones wait in order (threads and warm spares alike). */
  startConcurrency: number;
  /** How long a start waited for its turn, in ms, told as it begins. */
  onStartWaited?: (waitedMs: number) => void;
}

/**
 * The agent processes of one pool: starts one per call, at most `startConcurrency` at once (a herd of
 * starts on a few cores would make every one of them slow, and time out together), remembers the
 * latest `initialize` answer so capabilities can be read without a process, retires processes on
 * request and kills every process group (running or still starting) on close. No process starts
 * after close.
 */
export class AgentSupervisor {
  readonly #options: AgentSupervisorOptions;
  readonly #slots: LimitFunction;
  readonly #live = new Set<AgentProcess>();
  readonly #starting = new Set<Promise<AgentProcess>>();
  readonly #retired = new WeakSet<AgentProcess>();
  #info: AgentInfo | undefined;
  #closed = false;
  #failures: StartFailures = { consecutive: 0, lastError: undefined };

  constructor(options: AgentSupervisorOptions) {
    this.#options = options;
    this.#slots = pLimit({ concurrency: Math.max(1, options.startConcurrency), rejectOnClear: true });
  }

  /** Whether starting agents works: a worker whose agent cannot start is of no use to its threads. */
  get startFailures(): StartFailures {
    return this.#failures;
  }

  /** The `initialize` answer of the most recently started process, once one has started. */
  get info(): AgentInfo | undefined {
    return this.#info;
  }

  /** Processes waiting to start, starting, running or being stopped: everything that is not yet gone. */
  get processCount(): number {
    return this.#live.size + this.#starting.size;
  }

  /** Starts waiting for their turn. */
  get startsWaiting(): number {
    return this.#slots.pendingCount;
  }

  /** Starts under way (spawned or spawning, `initialize` not yet answered). */
  get startsRunning(): number {
    return this.#slots.activeCount;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Starts a new agent process in `room` (spawn and `initialize`) once it is its turn. */
  async start(room: AgentRoom): Promise<AgentProcess> {
    if (this.#closed) throw new PoolClosedError();
    const queuedAt = performance.now();
    const starting = this.#slots(() => {
      // Closed while it waited: nothing is spawned.
      if (this.#closed) throw new PoolClosedError();
      this.#options.onStartWaited?.(performance.now() - queuedAt);
      return this.#options.start(room);
    });
    this.#starting.add(starting);
    let agent: AgentProcess;
    try {
      agent = await starting;
    } catch (error) {
      if (!this.#closed) {
        const lastError = error instanceof Error ? error.message : String(error);
        this.#failures = { consecutive: this.#failures.consecutive + 1, lastError };
        this.#options.onStartFailed?.(this.#failures);
      }
      throw this.#closed ? new PoolClosedError() : error;
    } finally {
      this.#starting.delete(starting);
    }
    this.#failures = { consecutive: 0, lastError: undefined };
    if (this.#closed) {
      await agent.kill();
      throw new PoolClosedError();
    }
    this.#info = agent.info;
    this.#live.add(agent);
    void agent.exited.then(() => {
      this.#live.delete(agent);
      this.#options.onEnded({ agent, retired: this.#retired.has(agent) });
    });
    return agent;
  }

  /**
   * Kills a process its owner no longer needs (gracefully, or with `now` at once) and resolves once it
   * is gone; its end is reported as retired.
   */
  retire(agent: AgentProcess, how: { now?: boolean } = {}): Promise<unknown> {
    this.#retired.add(agent);
    return agent.kill(how);
  }

  /** Kills the process group of every running or starting agent; no process starts afterwards. */
  async close(): Promise<void> {
    this.#closed = true;
    // Starts still waiting for their turn are refused at once, not run one by one.
    this.#slots.clearQueue();
    const starting = await Promise.all([...this.#starting].map((start) => start.catch(() => undefined)));
    const agents = new Set([...this.#live, ...starting].filter((agent) => agent !== undefined));
    await Promise.all([...agents].map((agent) => this.retire(agent)));
  }
}
