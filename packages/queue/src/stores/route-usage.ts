import type { RedisClient } from '../connections.js';
import { failedIn, publishRouteSettings } from './route-settings.js';

/** What one turn spent, as its agent reported it (docs/adr/0059). */
export interface SpentUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  thoughtTokens?: number;
  cachedReadTokens?: number;
  cachedWriteTokens?: number;
  /** The turn's share of its session's cost, where the agent reports cost and the share is known. */
  cost?: { amount: number; currency: string };
}

/** What a route spent in one day (UTC). */
export interface RouteDay {
  day: string;
  route: string;
  /** Turns whose agent reported usage. */
  turns: number;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  /** Cost by currency, where the agent reported it. */
  cost: Record<string, number>;
}

/** A route's daily token budget, and where it comes from. */
export interface RouteBudget {
  tokens: number;
  /** `override`: an operator's (`tributary admin budget`); `file`: the route table's `dailyTokenBudget`. */
  source: 'override' | 'file';
}

/** Days of usage kept: a month back, and a little more, for `tributary admin usage --days 31`. */
export const USAGE_DAYS_KEPT = 35;
const DAY_MS = 24 * 60 * 60 * 1000;

/** The UTC day of `ms` as YYYY-MM-DD: budgets are spent per UTC day. */
export function usageDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

const COUNTS = ['turns', 'inputTokens', 'outputTokens', 'totalTokens'] as const;

/**
 * Token usage per route and day, and each route's daily budget (docs/adr/0059). A day's usage is one
 * hash (`route|field`), kept USAGE_DAYS_KEPT days. Budgets come from two hashes: the route table's,
 * which ingress publishes whole at its start and every reload, and the operators' overrides, which win
 * and stay until cleared.
 */
export class RouteUsage {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  /** Adds a turn's usage to its route's day. */
  async add(route: string, spent: SpentUsage, now = Date.now()): Promise<void> {
    const key = this.dayKey(usageDay(now));
    const step = this.redis
      .multi()
      .hincrby(key, `${route}|turns`, 1)
      .hincrby(key, `${route}|inputTokens`, spent.inputTokens)
      .hincrby(key, `${route}|outputTokens`, spent.outputTokens)
      .hincrby(key, `${route}|totalTokens`, spent.totalTokens);
    if (spent.cost !== undefined)
      step.hincrbyfloat(key, `${route}|cost|${spent.cost.currency}`, spent.cost.amount);
    failedIn(await step.pexpire(key, USAGE_DAYS_KEPT * DAY_MS).exec());
  }

  /** The tokens a route spent today so far. */
  async spentToday(route: string, now = Date.now()): Promise<number> {
    return Number((await this.redis.hget(this.dayKey(usageDay(now)), `${route}|totalTokens`)) ?? 0);
  }

  /** Every route's usage on each of the last `days` days (today first); days without any are left out. */
  async days(days: number, now = Date.now()): Promise<RouteDay[]> {
    const names = Array.from({ length: days }, (_, back) => usageDay(now - back * DAY_MS));
    const hashes = await Promise.all(names.map((day) => this.redis.hgetall(this.dayKey(day))));
    return names.flatMap((day, index) => routeDays(day, hashes[index]!));
  }

  /** The route's budget: an operator's override, else the table's; undefined for none. */
  async budgetOf(route: string): Promise<RouteBudget | undefined> {
    const [override, file] = await Promise.all([
      this.redis.hget(this.overridesKey, route),
      this.redis.hget(this.tableKey, route),
    ]);
    if (override !== null) return { tokens: Number(override), source: 'override' };
    if (file !== null) return { tokens: Number(file), source: 'file' };
    return undefined;
  }

  /** Every route's budget in force. */
  async budgets(): Promise<Record<string, RouteBudget>> {
    const [overrides, table] = await Promise.all([
      this.redis.hgetall(this.overridesKey),
      this.redis.hgetall(this.tableKey),
    ]);
    const budgets: Record<string, RouteBudget> = {};
    for (const [route, tokens] of Object.entries(table))
      budgets[route] = { tokens: Number(tokens), source: 'file' };
    for (const [route, tokens] of Object.entries(overrides))
      budgets[route] = { tokens: Number(tokens), source: 'override' };
    return budgets;
  }

  /** Replaces the route table's budgets with `budgets` (route → tokens a day). */
  publishTable(budgets: ReadonlyMap<string, number>): Promise<void> {
    return publishRouteSettings(this.redis, this.tableKey, budgets);
  }

  /** An operator's budget for `route`, over the table's; undefined clears it. */
  async override(route: string, tokens: number | undefined): Promise<void> {
    if (tokens === undefined) await this.redis.hdel(this.overridesKey, route);
    else await this.redis.hset(this.overridesKey, route, tokens);
  }

  private dayKey(day: string): string {
    return `${this.prefix}:usage:${day}`;
  }

  private get tableKey(): string {
    return `${this.prefix}:budgets:table`;
  }

  private get overridesKey(): string {
    return `${this.prefix}:budgets:override`;
  }
}

function routeDays(day: string, hash: Record<string, string>): RouteDay[] {
  const byRoute = new Map<string, RouteDay>();
  for (const [field, value] of Object.entries(hash)) {
    const [route, name, currency] = field.split('|') as [string, string, string | undefined];
    let entry = byRoute.get(route);
    if (entry === undefined) {
      entry = { day, route, turns: 0, inputTokens: 0, outputTokens: 0, totalTokens: 0, cost: {} };
      byRoute.set(route, entry);
    }
    if (name === 'cost' && currency !== undefined) entry.cost[currency] = Number(value);
    else if ((COUNTS as readonly string[]).includes(name))
      entry[name as (typeof COUNTS)[number]] = Number(value);
  }
  return [...byRoute.values()].sort((a, b) => a.route.localeCompare(b.route));
}
