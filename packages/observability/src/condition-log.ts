import type { LogSink } from './log-sink.js';

// While a condition lasts, it is logged again at most this often, with how many times it recurred.
const SUMMARY_EVERY_MS = 60_000;

/** What is logged when a condition starts (a warning, with the error), goes on, and ends. */
export interface ConditionLines {
  started: string;
  ongoing: string;
  ended: string;
}

export interface ConditionLogOptions {
  /**
   * Which failures are one condition. By default their messages once numbers are ignored
   * (`MOVED 3999 10.0.0.1:7001` and `MOVED 12 10.0.0.2:7002` are one condition).
   */
  conditionOf?: (error: unknown) => string;
  /** A count of `tally` calls the ended line carries under this name (ingress: refused requests). */
  tally?: string;
  /** When failures start after a quiet time, and when they end: what a condition changes besides the log. */
  onStarted?: () => void;
  onEnded?: () => void;
  now?: () => number;
}

interface Condition {
  key: string;
  since: number;
  lastLogged: number;
  repeats: number;
  tallied: number;
}

/**
 * Logs a recurring failure once per condition instead of once per occurrence: a warning when it starts,
 * then at most one line a minute with the number of repeats, and one line when it clears. A loop that
 * retries against a broken Redis, or ingress refusing every request through an outage, thus writes a
 * few lines, not a flood.
 */
export class ConditionLog {
  private current: Condition | undefined;
  private readonly lines: ConditionLines;
  private readonly conditionOf: (error: unknown) => string;

  constructor(
    private readonly logger: Pick<LogSink, 'warn' | 'info'>,
    /** The lines, or what fails: `what`, `what still failing`, `what: recovered`. */
    lines: ConditionLines | string,
    private readonly options: ConditionLogOptions = {},
  ) {
    this.lines =
      typeof lines === 'string'
        ? { started: lines, ongoing: `${lines} still failing`, ended: `${lines}: recovered` }
        : lines;
    this.conditionOf = options.conditionOf ?? ((error) => messageOf(error).replace(/\d+/g, '#'));
  }

  /** Whether a condition is in progress. */
  get active(): boolean {
    return this.current !== undefined;
  }

  report(error: unknown): void {
    this.occurred(error);
  }

  /** A failure counted under `options.tally` as well. */
  tally(error: unknown): void {
    this.occurred(error).tallied++;
  }

  /** The operation succeeded: a condition in progress is over. */
  cleared(): void {
    const current = this.current;
    if (!current) return;
    this.current = undefined;
    const { tally } = this.options;
    this.logger.info(
      {
        durationMs: this.now() - current.since,
        repeats: current.repeats,
        ...(tally ? { [tally]: current.tallied } : {}),
      },
      this.lines.ended,
    );
    this.options.onEnded?.();
  }

  private occurred(error: unknown): Condition {
    const key = this.conditionOf(error);
    const now = this.now();
    const current = this.current;
    if (current?.key === key) {
      current.repeats++;
      if (now - current.lastLogged >= SUMMARY_EVERY_MS) {
        this.logger.warn(
          { err: error, repeats: current.repeats, sinceMs: now - current.since },
          this.lines.ongoing,
        );
        current.lastLogged = now;
        current.repeats = 0;
      }
      return current;
    }
    this.current = { key, since: now, lastLogged: now, repeats: 0, tallied: current?.tallied ?? 0 };
    this.logger.warn({ err: error }, this.lines.started);
    if (!current) this.options.onStarted?.();
    return this.current;
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
