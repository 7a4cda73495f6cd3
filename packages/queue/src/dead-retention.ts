import { ConditionLog, type LogSink } from '@tributary/observability';
import type { RedisClient } from './connections.js';
import { DEAD_SCRIPTS, deadReport, deadTrim, type Trimmed } from './lua/dead-calls.js';
import { Scripts } from './lua/scripts.js';
import { deadBounds, type QueueConfig } from './queue-config.js';
import { DeadSets, threadOfItem } from './stores/dead-sets.js';
import { recentKeysOf } from './stores/keys-of.js';
import { type BucketKeys, bucketKeys, type DeadKind, deadSetKeys } from './thread-keys.js';

/** How often a worker trims what no write trimmed: dead items past their TTL, or over a cap lowered since. */
export const DEAD_TRIM_INTERVAL_MS = 60_000;
/** Items one trim call may drop from a set; it is called again while it leaves some. */
const TRIM_LIMIT = 500;
/** Index items one read of the upgrade pass looks at. */
const UPGRADE_CHUNK = 500;
const KINDS: readonly DeadKind[] = ['letters', 'replies'];

/**
 * Keeps the dead letters and dead replies within their bounds between the writes that keep them so
 * (docs/adr/0043-dead-letters-bounded-and-grouped-by-class.md), and says in the log at warn what the
 * TTL and the caps dropped since the last report, whichever process dropped it: once per eviction
 * across the fleet (dead-report). Its first run also moves, bucket by bucket, the threads' items the previous layout
 * kept, so that every item is in the sets the caps count.
 */
export class DeadRetention {
  private readonly scripts: Scripts;
  private readonly dead: DeadSets;
  private readonly errors: ConditionLog;
  private upgraded = false;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly config: Readonly<QueueConfig>,
    private readonly redis: RedisClient,
    private readonly logger: LogSink,
  ) {
    this.scripts = new Scripts(redis, DEAD_SCRIPTS);
    this.dead = new DeadSets(redis, recentKeysOf(config.prefix, config.buckets));
    this.errors = new ConditionLog(logger, 'dead letters not trimmed; retrying next interval');
  }

  start(): void {
    const tick = () => {
      this.running = this.runOnce()
        .then(() => this.errors.cleared())
        .catch((error: unknown) => this.errors.report(error))
        .finally(() => {
          if (this.timer) this.timer = setTimeout(tick, DEAD_TRIM_INTERVAL_MS);
        });
    };
    this.timer = setTimeout(tick, 0);
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One pass over every bucket; returns what was reported evicted, by `<kind>:<cause>`. */
  async runOnce(): Promise<Map<string, number>> {
    const { buckets, prefix } = this.config;
    const upgrade = !this.upgraded;
    const reports = await Promise.all(
      Array.from({ length: buckets }, async (_, bucket) => {
        const keys = bucketKeys(prefix, bucket);
        for (const kind of KINDS) {
          if (upgrade) await this.upgrade(keys, kind);
          await this.trim(keys, kind);
        }
        return this.scripts.run(deadReport, { evicted: keys.deadevicted }, {});
      }),
    );
    this.upgraded = true;
    const evicted = new Map<string, number>();
    for (const report of reports) {
      for (const [field, count] of report) evicted.set(field, (evicted.get(field) ?? 0) + count);
    }
    if (evicted.size > 0) {
      this.logger.warn(
        { evicted: Object.fromEntries(evicted) },
        'dead letters or dead replies dropped unhandled: past DEAD_TTL_MS, or over DEAD_MAX_PER_THREAD or DEAD_MAX',
      );
    }
    return evicted;
  }

  private async trim(keys: BucketKeys, kind: DeadKind): Promise<void> {
    const args = { kind, ...deadBounds(this.config), limit: TRIM_LIMIT };
    let trimmed: Trimmed;
    do trimmed = await this.scripts.run(deadTrim, deadSetKeys(keys, kind), args);
    while (trimmed.more);
  }

  /** Moves the threads whose indexed items have no record in the set yet (the previous layout's). */
  private async upgrade(keys: BucketKeys, kind: DeadKind): Promise<void> {
    const set = deadSetKeys(keys, kind);
    for (let start = 0; ; start += UPGRADE_CHUNK) {
      const items = await this.redis.zrange(set.index, start, start + UPGRADE_CHUNK - 1);
      if (items.length === 0) return;
      const classes = await this.redis.hmget(set.classof, ...items);
      const threads = new Set(items.filter((_, i) => classes[i] === null).map(threadOfItem));
      for (const thread of threads) await this.dead.migrate(thread, kind);
    }
  }
}
