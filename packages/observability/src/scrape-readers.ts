import type { Gauge } from 'prom-client';

/** Reads current values (from Redis, from the process) and sets them on its gauges. */
export type ScrapeRead = () => void | Promise<void>;

interface Reader {
  readonly gauges: readonly Gauge<string>[];
  readonly read: ScrapeRead;
}

/**
 * The reads that feed gauges computed at scrape time. One scrape collects every gauge concurrently and
 * each gauge's `collect` calls `run()`, so the reads are shared by the calls that arrive while they are
 * in flight: one Redis round trip per scrape, not one per gauge.
 */
export class ScrapeReaders {
  readonly #readers: Reader[] = [];
  readonly #onFailure: (gauges: readonly Gauge<string>[]) => void;
  #inFlight: Promise<void> | undefined;

  /** `onFailure` gets the gauges of a read that threw, so they can stop showing stale values. */
  constructor(onFailure: (gauges: readonly Gauge<string>[]) => void) {
    this.#onFailure = onFailure;
  }

  add(gauges: readonly Gauge<string>[], read: ScrapeRead): void {
    this.#readers.push({ gauges, read });
  }

  run(): Promise<void> {
    this.#inFlight ??= this.#runAll().finally(() => {
      this.#inFlight = undefined;
    });
    return this.#inFlight;
  }

  async #runAll(): Promise<void> {
    await Promise.all(
      this.#readers.map(async ({ gauges, read }) => {
        try {
          await read();
        } catch {
          // A failed read must not fail the scrape: the process's other metrics (ingress answering 503
          // while Redis is down, say) matter most exactly then.
          this.#onFailure(gauges);
        }
      }),
    );
  }
}
