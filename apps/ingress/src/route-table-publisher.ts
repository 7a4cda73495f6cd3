import type { RouteTable } from '@tributary/config';
import { ConditionLog } from '@tributary/observability';
import type { RouteLines, RouteUsage, TurnLimits } from '@tributary/queue';
import type { Logger } from 'pino';

/**
 * What the workers need of the route table, published to Redis, since workers never read the route
 * file: each route's daily token budget (docs/adr/0059), its limit on concurrent turns (0062) and its
 * dispatch weight (0063).
 * Published at the start and again every `everyMs`, so that a reload, a publish that failed and a Redis
 * that lost its data all heal within one period. Every ingress publishes the same table; operators'
 * budget overrides are kept apart and win.
 */
export class RouteTablePublisher {
  private timer: NodeJS.Timeout | undefined;
  private readonly errors: ConditionLog;

  constructor(
    private readonly usage: Pick<RouteUsage, 'publishTable'>,
    private readonly turnLimits: Pick<TurnLimits, 'publishTable'>,
    private readonly lines: Pick<RouteLines, 'publishWeights'>,
    private readonly table: () => RouteTable,
    logger: Logger,
  ) {
    this.errors = new ConditionLog(logger, "route table's budgets, turn limits and weights not published");
  }

  start(everyMs: number): void {
    void this.publish();
    this.timer = setInterval(() => void this.publish(), everyMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  async publish(): Promise<void> {
    try {
      const table = this.table();
      await Promise.all([
        this.usage.publishTable(table.budgets()),
        this.turnLimits.publishTable(table.turnLimits()),
        this.lines.publishWeights(table.dispatchWeights()),
      ]);
      this.errors.cleared();
    } catch (error) {
      this.errors.report(error);
    }
  }
}
