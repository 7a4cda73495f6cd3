import type { LogSink } from './log-sink.js';

// While a condition lasts, it is logged again at most this often, with how many times it recurred.
const SUMMARY_EVERY_MS = 60_000;

interface Condition {
  key: string;
  since: number;
  lastLogged: number;
  repeats: number;
}

/**
 * Logs a recurring error once per condition instead of once per occurrence: a warning when it starts,
 * then at most one line a minute with the number of repeats, and one line when it clears. A loop that
 * retries against a broken Redis (or a Cluster it cannot route) thus writes a few lines, not a flood.
 * Errors are the same condition when their messages match once numbers are ignored
 * (`MOVED 3999 10.0.0.1:7001` and `MOVED 12 10.0.0.2:7002` are one condition).
 */
export class RepeatedErrors {
  private current: Condition | undefined;

  constructor(
    private readonly logger: Pick<LogSink, 'warn' | 'info'>,
    private readonly what: string,
    private readonly now: () => number = Date.now,
  ) {}

  report(error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    const key = message.replace(/\d+/g, '#');
    const now = this.now();
    const current = this.current;
    if (current?.key === key) {
      current.repeats++;
      if (now - current.lastLogged < SUMMARY_EVERY_MS) return;
      this.logger.warn(
        { err: error, repeats: current.repeats, sinceMs: now - current.since },
        `${this.what} still failing`,
      );
      current.lastLogged = now;
      current.repeats = 0;
      return;
    }
    this.current = { key, since: now, lastLogged: now, repeats: 0 };
    this.logger.warn({ err: error }, this.what);
  }

  /** The operation succeeded: a condition in progress is over. */
  cleared(): void {
    const current = this.current;
    if (!current) return;
    this.current = undefined;
    this.logger.info(
      { durationMs: this.now() - current.since, repeats: current.repeats },
      `${this.what}: recovered`,
    );
  }
}
