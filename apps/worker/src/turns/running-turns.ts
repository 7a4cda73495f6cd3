import type { Metrics } from '@tributary/observability';
import type { MessageRef } from '@tributary/platforms';
import type { Logger } from 'pino';

/** What the control channel reaches in a turn that takes steers: one more pass for waiting messages. */
interface Steerable {
  poke(): void;
}

/** Where a running turn stands: its batch, its lease's fence, the message it answers. */
export interface TurnPlace {
  batchId: string;
  fence: number;
  target: MessageRef;
}

interface RunningTurn {
  readonly turn: AbortController;
  readonly place: TurnPlace | undefined;
  steering?: Steerable;
}

/**
 * The running turn of each thread this worker's handler runs, with its steering when it takes steers,
 * so the control channel's `/cancel` and `steer` reach it; and a way to wait until none runs. A turn
 * the runner aborted (a drain, a lost lease) is handed back at once while its handler still ends: the
 * agent killed, the outcome decided. An operator's drain waits for that too, so a worker reported
 * "drained" lists no running thread. (The runner keeps the leases it must abort at shutdown itself:
 * that is the queue's side of a turn, this the worker's.)
 */
export class RunningTurns {
  readonly #turns = new Map<string, RunningTurn>();
  readonly #whenNone = new Set<() => void>();

  /** Aborts the thread's running turn with `reason`, if one runs. */
  cancel(thread: string, reason: Error): void {
    this.#turns.get(thread)?.turn.abort(reason);
  }

  /** Offers messages that wait to the thread's running turn, if it takes steers. */
  poke(thread: string): void {
    this.#turns.get(thread)?.steering?.poke();
  }

  /** `turn` takes steers through `steering` until `unsteer` (its thread's `poke` reaches it). */
  steer(thread: string, turn: AbortController, steering: Steerable): void {
    const running = this.#turns.get(thread);
    if (running?.turn === turn) running.steering = steering;
  }

  /** `turn` takes no more steers. */
  unsteer(thread: string, turn: AbortController): void {
    const running = this.#turns.get(thread);
    if (running?.turn === turn) delete running.steering;
  }

  has(thread: string): boolean {
    return this.#turns.has(thread);
  }

  threads(): IterableIterator<string> {
    return this.#turns.keys();
  }

  start(thread: string, turn: AbortController, place?: TurnPlace): void {
    this.#turns.set(thread, { turn, place });
  }

  /** The thread's running turn and where it stands, if one runs here. */
  running(thread: string): { signal: AbortSignal; place: TurnPlace } | undefined {
    const running = this.#turns.get(thread);
    return running?.place === undefined ? undefined : { signal: running.turn.signal, place: running.place };
  }

  /** Ends `turn`; a newer turn of the same thread that replaced it stays. */
  end(thread: string, turn: AbortController): void {
    if (this.#turns.get(thread)?.turn !== turn) return;
    this.#turns.delete(thread);
    if (this.#turns.size > 0) return;
    for (const none of this.#whenNone) none();
    this.#whenNone.clear();
  }

  /**
   * Resolves with [] once no turn runs (at once when none does), or after `withinMs` with the threads
   * whose turns still run then: a handler that does not end after its abort must not hold a drain up.
   */
  none(withinMs: number): Promise<string[]> {
    if (this.#turns.size === 0) return Promise.resolve([]);
    return new Promise((resolve) => {
      const none = () => {
        clearTimeout(timer);
        resolve([]);
      };
      const timer = setTimeout(() => {
        this.#whenNone.delete(none);
        resolve([...this.#turns.keys()]);
      }, withinMs);
      this.#whenNone.add(none);
    });
  }
}

/**
 * After a drain has handed its threads back: waits up to `withinMs` for the aborted turns' handlers to
 * end. One that has not is named in a warn line and counted; the drain reports done regardless.
 */
export async function settleAbortedTurns(
  running: RunningTurns,
  withinMs: number,
  report: { logger: Logger; metrics: Pick<Metrics, 'drainUnsettledTurnsTotal'> },
): Promise<void> {
  const unsettled = await running.none(withinMs);
  if (unsettled.length === 0) return;
  report.metrics.drainUnsettledTurnsTotal.inc(unsettled.length);
  report.logger.warn(
    { threads: unsettled, waitedMs: withinMs },
    'drained, but these turns have not ended since their abort (their agents may still run); their threads went to other workers; restart this worker if they stay in its running list',
  );
}
