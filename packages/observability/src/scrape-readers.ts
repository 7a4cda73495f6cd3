import type { Gauge } from 'prom-client';
import { ConditionLog } from './condition-log.js';
import type { LogSink } from './log-sink.js';

/** Reads current values (from Redis, from the process) and sets them on its gauges. */
export type ScrapeRead = () => void | Promise<void>;

interface Reader {
  /** Says why the read failed: once per condition, then a counted line a minute, then its end. */
  readonly errors: ConditionLog;
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
  #inFlight: Promise<void> | undefined;

  /**
   * `onFailure` gets the gauges of a read that threw, so they can stop showing stale values; `logger`
   * is told why it threw, at warn.
   */
  constructor(
    private readonly onFailure: (gauges: readonly Gauge<string>[]) => void,
    private readonly logger: LogSink,
  ) {}

  /** `name` says which read failed in the log (createMetrics names it after its gauges). */
  add(name: string, gauges: readonly Gauge<string>[], read: ScrapeRead): void {
    const what = `scrape-time read of ${name} failed: its gauges report NaN (or no series) until it succeeds`;
    this.#readers.push({ errors: new ConditionLog(this.logger, what), gauges, read });
  }

  run(): Promise<void> {
    this.#inFlight ??= this.#runAll().finally(() => {
      this.#inFlight = undefined;
    });
    return this.#inFlight;
  }

  async #runAll(): Promise<void> {
    await Promise.all(
      this.#readers.map(async ({ errors, gauges, read }) => {
        try {
          await read();
          errors.cleared();
        } catch (error) {
          // A failed read must not fail the scrape: the process's other metrics (ingress answering 503
          // while Redis is down, say) matter most exactly then.
          this.onFailure(gauges);
          errors.report(error);
        }
      }),
    );
  }
}
