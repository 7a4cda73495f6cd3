import type { LogSink } from '@tributary/observability';

/** What an outage changes besides the log: the metrics. */
export interface OutageEvents {
  started(): void;
  ended(): void;
}

interface Outage {
  since: number;
  refused: number;
}

/**
 * Tells a Redis outage as two log lines instead of one per refused request: a warning when the first
 * failure is seen (a refused request or a lost connection), one line when Redis answers again, with how
 * long it lasted and how many requests were refused meanwhile.
 */
export class OutageLog {
  private outage: Outage | undefined;

  constructor(
    private readonly log: Pick<LogSink, 'warn' | 'info'>,
    private readonly events: OutageEvents,
    private readonly now: () => number = Date.now,
  ) {}

  get down(): boolean {
    return this.outage !== undefined;
  }

  /** A request was refused (503) because Redis did not answer. */
  refused(reason: string): void {
    this.failed(reason).refused++;
  }

  /** The connection reported a problem; no request needs to have failed yet. */
  connectionFailed(reason: string): void {
    this.failed(reason);
  }

  /** Redis answered: ends the outage, if there was one. */
  answered(): void {
    const { outage } = this;
    if (!outage) return;
    this.outage = undefined;
    this.log.info(
      { durationMs: this.now() - outage.since, refusedRequests: outage.refused },
      'redis outage ended: Redis answers again',
    );
    this.events.ended();
  }

  private failed(reason: string): Outage {
    if (this.outage) return this.outage;
    this.outage = { since: this.now(), refused: 0 };
    this.log.warn({ reason }, 'redis outage started: requests get 503 until Redis answers');
    this.events.started();
    return this.outage;
  }
}
