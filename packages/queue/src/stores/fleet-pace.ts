import { setTimeout as sleep } from 'node:timers/promises';
import type { RedisClient } from '../connections.js';
import { paceReserve } from '../lua/pace-calls.js';
import { Scripts } from '../lua/scripts.js';

/**
 * Posts and edits paced across the whole fleet, one budget per place a platform limits (a channel, a
 * bot), kept in Redis so that two workers writing into one channel share it. A write reserves the next
 * slot of each limit and waits for the latest, so writers are served in the order they asked instead
 * of racing into the platform's 429s. A draft (a streamed edit) takes slots only if they are free now.
 */
export class FleetPace {
  private readonly scripts: Scripts;

  constructor(
    redis: RedisClient,
    private readonly prefix: string,
    private readonly onWait: (platform: string, waitMs: number) => void = () => {},
  ) {
    this.scripts = new Scripts(redis, [paceReserve]);
  }

  /**
   * Waits for a slot of every limit and answers undefined; for a draft that finds one taken, answers
   * at once how long until the next (having waited for nothing).
   */
  async take(
    platform: string,
    limits: readonly { key: string; perMinute: number; burst: number }[],
    draft: boolean,
  ): Promise<number | undefined> {
    let waitMs = 0;
    for (const limit of limits) {
      const slot = await this.scripts.run(
        paceReserve,
        { tat: `${this.prefix}:pace:{${limit.key}}` },
        { intervalMs: Math.ceil(60_000 / limit.perMinute), burst: limit.burst, draft: draft ? 1 : 0 },
      );
      if (!slot.reserved) return slot.waitMs;
      waitMs = Math.max(waitMs, slot.waitMs);
    }
    this.onWait(platform, waitMs);
    if (waitMs > 0) await sleep(waitMs);
    return undefined;
  }
}
