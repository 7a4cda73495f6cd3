import type { AgentProcess } from './agent-process.js';
import { PoolClosedError } from './errors.js';

/**
 * Keeps at most one agent process alive: starts it on first use, again after it died, and kills it on
 * close. Concurrent callers share one start.
 */
export class AgentSupervisor {
  readonly #start: () => Promise<AgentProcess>;
  readonly #onExit: (agent: AgentProcess) => void;
  #current: AgentProcess | undefined;
  #starting: Promise<AgentProcess> | undefined;
  #closed = false;

  constructor(start: () => Promise<AgentProcess>, onExit: (agent: AgentProcess) => void) {
    this.#start = start;
    this.#onExit = onExit;
  }

  /** The running process, if any. */
  get current(): AgentProcess | undefined {
    return this.#current?.alive ? this.#current : undefined;
  }

  get closed(): boolean {
    return this.#closed;
  }

  get(): Promise<AgentProcess> {
    if (this.#closed) return Promise.reject(new PoolClosedError());
    if (this.#current?.alive) return Promise.resolve(this.#current);
    this.#starting ??= this.#launch().finally(() => {
      this.#starting = undefined;
    });
    return this.#starting;
  }

  /** Kills the process group of the running (or starting) agent; no process starts afterwards. */
  async close(): Promise<void> {
    this.#closed = true;
    const starting = await this.#starting?.catch(() => undefined);
    const agents = new Set([this.#current, starting].filter((agent) => agent !== undefined));
    await Promise.all([...agents].map((agent) => agent.kill()));
  }

  async #launch(): Promise<AgentProcess> {
    const agent = await this.#start();
    if (this.#closed) {
      await agent.kill();
      throw new PoolClosedError();
    }
    this.#current = agent;
    void agent.exited.then(() => {
      if (this.#current === agent) this.#current = undefined;
      this.#onExit(agent);
    });
    return agent;
  }
}
