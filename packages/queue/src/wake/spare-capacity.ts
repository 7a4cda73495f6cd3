import { ConditionLog, type LogSink, silentLogger } from '@tributary/observability';
import type { RedisClient } from '../connections.js';
import type { SlotGate } from './slot-gate.js';

/** A free slot must stay free this long before it is announced: one freed and taken at once is not spare. */
const SETTLE_MS = 100;
/** While free, the announcement is renewed this often. */
const REFRESH_MS = 1_000;
/** An announcement not renewed for this long is stale (its worker filled up without saying, or died). */
const STALE_MS = 3_000;

/**
 * Which workers have a turn slot to spare: a hint for whether moving a waiting thread to another
 * worker would get it served sooner (docs/adr/0007). A fleet-wide sorted set of owners scored by when
 * they last said so. Under saturation no slot stays free long enough to be announced, so it costs
 * nothing; an idle worker renews its entry once a second.
 */
export class SpareCapacity {
  private timer: NodeJS.Timeout | undefined;
  private freeSince: number | undefined;
  private announcedAt: number | undefined;
  private readonly errors: ConditionLog;

  constructor(
    private readonly redis: RedisClient,
    private readonly key: string,
    private readonly owner: string,
    private readonly gate: SlotGate,
    logger: LogSink = silentLogger,
  ) {
    this.errors = new ConditionLog(logger, 'spare capacity not announced; retrying');
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), SETTLE_MS / 2);
    this.timer.unref();
  }

  /** Stops announcing and withdraws the entry: a stopping worker has nothing to spare. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    if (this.announcedAt === undefined) return;
    this.announcedAt = undefined;
    await this.redis.zrem(this.key, this.owner).catch((error: unknown) => this.errors.report(error));
  }

  /** Whether another worker said recently that it has a free slot. */
  async othersHaveRoom(): Promise<boolean> {
    const spare = await this.redis.zrangebyscore(this.key, Date.now() - STALE_MS, '+inf', 'LIMIT', 0, 2);
    return spare.some((owner) => owner !== this.owner);
  }

  private async tick(): Promise<void> {
    const now = Date.now();
    try {
      if (!this.gate.hasFree) {
        this.freeSince = undefined;
        if (this.announcedAt === undefined) return;
        this.announcedAt = undefined;
        await this.redis.zrem(this.key, this.owner);
        return;
      }
      this.freeSince ??= now;
      if (now - this.freeSince < SETTLE_MS) return;
      if (this.announcedAt !== undefined && now - this.announcedAt < REFRESH_MS) return;
      this.announcedAt = now;
      await this.redis
        .multi()
        .zadd(this.key, now, this.owner)
        .zremrangebyscore(this.key, '-inf', now - STALE_MS)
        .exec();
      this.errors.cleared();
    } catch (error) {
      this.errors.report(error);
    }
  }
}
