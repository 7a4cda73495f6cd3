import type { Cluster, Redis } from 'ioredis';
import { type WaitOptions, waitFor } from './wait-for.js';

/** Redis's clock in milliseconds, the clock leases, TTLs, grace periods and stream ids are measured on. */
export async function redisTime(redis: Redis | Cluster): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/**
 * Waits until Redis's clock reads `atMs` or later. For a test whose point is that time passes (a lease
 * expires, a grace period or a retention window ends), this waits as long as that takes on the clock
 * the code under test reads, instead of a sleep guessed to be long enough.
 */
export async function redisClockReaches(
  redis: Redis | Cluster,
  atMs: number,
  options: WaitOptions = {},
): Promise<void> {
  await waitFor(async () => (await redisTime(redis)) >= atMs, { what: `Redis time ${atMs}`, ...options });
}
