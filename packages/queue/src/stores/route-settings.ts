import type { RedisClient } from '../connections.js';

/**
 * A per-route number of the route table (a budget, a turn limit, a weight) as ingress publishes it for
 * the workers, which never read the route file: one hash, replaced whole in one transaction, so a
 * reader sees the old table or the new one.
 */
export async function publishRouteSettings(
  redis: RedisClient,
  key: string,
  settings: ReadonlyMap<string, number>,
): Promise<void> {
  const step = redis.multi().del(key);
  if (settings.size > 0) step.hset(key, Object.fromEntries(settings));
  failedIn(await step.exec());
}

/** A transaction answers each command's error instead of throwing it: the first one is thrown here. */
export function failedIn(results: [Error | null, unknown][] | null): void {
  const failed = results?.find(([error]) => error !== null)?.[0];
  if (failed) throw failed;
}

/** The published numbers, by route. */
export async function readRouteSettings(redis: RedisClient, key: string): Promise<Record<string, number>> {
  const table = await redis.hgetall(key);
  return Object.fromEntries(Object.entries(table).map(([route, value]) => [route, Number(value)]));
}
