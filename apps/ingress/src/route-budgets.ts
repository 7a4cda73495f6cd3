import type { RouteTable } from '@tributary/config';
import { ConditionLog } from '@tributary/observability';
import type { RouteUsage } from '@tributary/queue';
import type { Logger } from 'pino';

/**
 * The route table's daily token budgets, published to Redis for the workers (docs/adr/0059), which
 * never read the route file. Published at the start and again every `everyMs`, so that a reload, a
 * publish that failed and a Redis that lost its data all heal within one period. Every ingress
 * publishes the same table; operators' overrides are kept apart and win.
 */
export class RouteBudgets {
  private timer: NodeJS.Timeout | undefined;
  private readonly errors: ConditionLog;

  constructor(
    private readonly usage: Pick<RouteUsage, 'publishTable'>,
    private readonly table: () => RouteTable,
    logger: Logger,
  ) {
    this.errors = new ConditionLog(logger, "route table's token budgets not published");
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
      await this.usage.publishTable(this.table().budgets());
      this.errors.cleared();
    } catch (error) {
      this.errors.report(error);
    }
  }
}
