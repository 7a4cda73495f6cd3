import type { TurnResult } from '@tributary/acp';
import type { Metrics } from '@tributary/observability';
import type { RouteUsage, SpentUsage } from '@tributary/queue';
import type { Logger } from 'pino';

/** Raised before a turn of a route that has spent its daily token budget: the batch waits, kept. */
export class RouteBudgetSpent extends Error {
  override name = 'RouteBudgetSpent';

  constructor(
    readonly route: string,
    readonly spent: number,
    readonly budget: number,
  ) {
    super(`route ${route} spent ${spent} tokens today, over its daily budget of ${budget}`);
  }

  /** What the thread is told while its messages wait. */
  get notice(): string {
    return `⏳ These messages are waiting: this channel has used its daily token budget (${this.spent.toLocaleString('en')} of ${this.budget.toLocaleString('en')} tokens today, UTC). They are kept and will be answered after midnight UTC, or as soon as an operator raises the budget.`;
  }
}

/** Token kinds as the agent's usage names them, and as the metric's `kind` label does. */
const KINDS = [
  ['inputTokens', 'input'],
  ['outputTokens', 'output'],
  ['thoughtTokens', 'thought'],
  ['cachedReadTokens', 'cached_read'],
  ['cachedWriteTokens', 'cached_write'],
] as const;

/** An ISO 4217 code is kept (label and record); anything else an agent calls its currency is `other`. */
function currencyOf(reported: string): string {
  return /^[A-Z]{3}$/.test(reported) ? reported : 'other';
}

type SpendingMetrics = Pick<
  Metrics,
  | 'routeTokensTotal'
  | 'agentTokensTotal'
  | 'agentCostTotal'
  | 'turnsWithoutUsageTotal'
  | 'routeBudgetWaitsTotal'
  | 'routeBudgetUncheckedTotal'
  | 'routeUsageUnrecordedTotal'
>;

/**
 * What each route's turns spend, and its daily token budget (docs/adr/0059): a turn's usage, as its
 * agent reported it, is counted per route in Prometheus and added to the route's day in Redis; a turn
 * of a route whose day is spent does not start, and its batch waits.
 */
export class RouteSpending {
  constructor(
    private readonly usage: Pick<RouteUsage, 'add' | 'spentToday' | 'budgetOf'>,
    private readonly metrics: SpendingMetrics,
  ) {}

  /**
   * Before a turn: throws RouteBudgetSpent while the route's spending today has reached its budget.
   * A budget that cannot be read lets the turn run, at warn: the budget bounds spending, it is not a
   * gate that Redis trouble should close (the turn needs Redis to commit anyway).
   */
  async admit(route: string, log: Logger): Promise<void> {
    let budget: number | undefined;
    let spent: number;
    try {
      budget = (await this.usage.budgetOf(route))?.tokens;
      if (budget === undefined) return;
      spent = await this.usage.spentToday(route);
    } catch (error) {
      this.metrics.routeBudgetUncheckedTotal.inc({ route });
      log.warn({ err: error, route }, "the route's token budget was not read; this turn runs unchecked");
      return;
    }
    if (spent < budget) return;
    this.metrics.routeBudgetWaitsTotal.inc({ route });
    log.warn(
      { route, spent, budget },
      "the route's daily token budget is spent; the thread's messages wait until midnight UTC or a raised budget",
    );
    throw new RouteBudgetSpent(route, spent, budget);
  }

  /**
   * After a turn the agent answered: counts what it reported and returns it for the batch's record.
   * A turn without a report counts nothing, and is counted as such.
   */
  async spent(route: string, result: TurnResult, log: Logger): Promise<SpentUsage | undefined> {
    if (result.usage === undefined) {
      this.metrics.turnsWithoutUsageTotal.inc({ route });
      return undefined;
    }
    const { cost } = result;
    const spent: SpentUsage = {
      ...result.usage,
      ...(cost ? { cost: { amount: cost.amount, currency: currencyOf(cost.currency) } } : {}),
    };
    this.metrics.routeTokensTotal.inc({ route }, spent.totalTokens);
    for (const [field, kind] of KINDS) {
      const tokens = spent[field];
      if (tokens !== undefined) this.metrics.agentTokensTotal.inc({ route, kind }, tokens);
    }
    if (spent.cost !== undefined) {
      this.metrics.agentCostTotal.inc({ route, currency: spent.cost.currency }, spent.cost.amount);
    }
    try {
      await this.usage.add(route, spent);
    } catch (error) {
      this.metrics.routeUsageUnrecordedTotal.inc();
      log.warn(
        { err: error, route },
        "the turn's usage was not added to its route's day; its budget undercounts it",
      );
    }
    return spent;
  }
}
