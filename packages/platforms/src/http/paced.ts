import { createHash } from 'node:crypto';
import { type Pace, type PaceLimit, PlatformApiError } from '../outbound.js';

/**
 * Waits for the fleet's shared budget of each limit before a write (`Pace`); a draft that finds one
 * spent is not written, and fails as a rate limit would, with the wait until the next slot.
 */
export async function paced(
  pace: Pace | undefined,
  platform: string,
  method: string,
  limits: readonly PaceLimit[],
  draft: boolean,
): Promise<void> {
  if (pace === undefined) return;
  const busyMs = await pace(platform, limits, draft);
  if (busyMs === undefined) return;
  throw new PlatformApiError(
    platform,
    method,
    429,
    `not written: the shared budget of this channel is spent for ${busyMs} ms`,
    'paced',
    busyMs,
  );
}

/** A bot's place in the budgets: its token's digest, never the token. */
export function botKey(platform: string, token: string): string {
  return `${platform}:bot:${createHash('sha256').update(token).digest('hex').slice(0, 16)}`;
}
