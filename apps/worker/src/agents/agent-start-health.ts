import type { StartFailures } from '@tributary/acp';

/** Failed agent starts in a row after which a worker takes no new threads until one succeeds. */
export const START_FAILURES_TO_HOLD = 3;

/** The pause before the `attempt`-th probe start (0-based) of a worker whose agent does not start. */
export function probeDelayMs(attempt: number): number {
  return Math.min(1_000 * 2 ** attempt, 15_000);
}

export interface AgentStartHealthDeps {
  /** Starts one agent to learn whether starting works again; rejects when it did not. */
  probe(): Promise<void>;
  /** Starts have failed `START_FAILURES_TO_HOLD` times in a row: stop taking threads. */
  holding(failures: StartFailures): void;
  /** A start succeeded after a hold: take threads again. */
  recovered(): void;
}

/**
 * Whether this worker's agent starts. A start failure is the fleet's fault, not the messages': after
 * a few in a row the worker takes no new threads (their batches go to workers whose agents start, or
 * wait for this one), and since no thread will try a start then, it tries one on its own, with a
 * growing pause, until one succeeds.
 */
export class AgentStartHealth {
  readonly #deps: AgentStartHealthDeps;
  #holding = false;
  #attempt = 0;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(deps: AgentStartHealthDeps) {
    this.#deps = deps;
  }

  /** Whether the worker is holding off new threads because its agent does not start. */
  get holding(): boolean {
    return this.#holding;
  }

  /** A start failed; `failures` is the run so far. */
  failed(failures: StartFailures): void {
    if (this.#holding || this.#closed || failures.consecutive < START_FAILURES_TO_HOLD) return;
    this.#holding = true;
    this.#attempt = 0;
    this.#deps.holding(failures);
    this.#probeLater();
  }

  /** A start succeeded (a thread's, a spare's or a probe's). */
  started(): void {
    if (!this.#holding) return;
    this.#holding = false;
    clearTimeout(this.#timer);
    this.#deps.recovered();
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
  }

  #probeLater(): void {
    this.#timer = setTimeout(() => {
      void this.#deps
        .probe()
        .catch(() => undefined)
        .finally(() => {
          if (!this.#holding || this.#closed) return;
          this.#attempt++;
          this.#probeLater();
        });
    }, probeDelayMs(this.#attempt));
    this.#timer.unref();
  }
}
