import { type LogSink, silentLogger } from '@tributary/observability';
import type { RedisClient } from './connections.js';
import type { Doorbell } from './doorbells.js';
import { RepeatedErrors } from './repeated-errors.js';
import { bucketKeys, decodeThread, workerKeys } from './thread-keys.js';
import type { ThreadQueue } from './thread-queue.js';

export interface SweepReport {
  leasesRevived: number;
  doorbellsRevived: number;
  /** Threads taken from workers that are gone (presence expired), their leases still running. */
  takenOver: number;
}

const SWEEP_BATCH = 200;

/**
 * Revives threads whose owner is gone (its presence expired) or whose owner's lease expired, and
 * threads whose doorbell was lost. Every worker runs one; a short per-bucket lock keeps it to one
 * sweeper per bucket at a time.
 */
export class Sweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private readonly errors: RepeatedErrors;

  constructor(
    private readonly queue: ThreadQueue,
    private readonly redis: RedisClient,
    private readonly doorbell: Doorbell,
    private readonly owner: string,
    private readonly logger: LogSink = silentLogger,
    private readonly onRevived?: (report: SweepReport) => void,
  ) {
    this.errors = new RepeatedErrors(logger, 'sweep failed; retrying next interval');
  }

  start(): void {
    const tick = () => {
      this.running = this.sweepOnce()
        .then((report) => {
          this.errors.cleared();
          if (report.leasesRevived + report.doorbellsRevived + report.takenOver > 0) {
            this.logger.info({ ...report }, 'sweeper revived threads');
            this.onRevived?.(report);
          }
        })
        .catch((error: unknown) => this.errors.report(error))
        .finally(() => {
          if (this.timer) this.timer = setTimeout(tick, this.queue.config.sweepIntervalMs);
        });
    };
    this.timer = setTimeout(tick, 0);
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  async sweepOnce(): Promise<SweepReport> {
    const report: SweepReport = { leasesRevived: 0, doorbellsRevived: 0, takenOver: 0 };
    // Whether each owner seen in this sweep is present; asked once per owner, not once per thread.
    const present = new Map<string, Promise<boolean>>();
    // Buckets are swept concurrently, so their commands leave together (auto-pipelining): one after
    // another, a sweep made five round trips per bucket, a worker's largest source of Redis calls.
    await Promise.all(
      Array.from({ length: this.queue.config.buckets }, (_, bucket) =>
        this.sweepBucket(bucket, report, present),
      ),
    );
    return report;
  }

  private async sweepBucket(
    bucket: number,
    report: SweepReport,
    present: Map<string, Promise<boolean>>,
  ): Promise<void> {
    const { redis } = this;
    const { config } = this.queue;
    const keys = bucketKeys(config.prefix, bucket);
    const locked = await redis.set(keys.sweepLock, this.owner, 'PX', config.sweepIntervalMs, 'NX');
    if (locked !== 'OK') return;
    const [seconds, micros] = await redis.time();
    const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);

    const expired = await redis.zrangebyscore(keys.run, '-inf', now, 'LIMIT', 0, SWEEP_BATCH);
    for (const member of expired) {
      if (await this.queue.revive(member, 'lease')) report.leasesRevived++;
    }

    const leased = await redis.zrangebyscore(keys.run, `(${now}`, '+inf', 'LIMIT', 0, SWEEP_BATCH);
    // Awaited first: `+= await` would add to the count read before other buckets added theirs.
    const takenOver = await this.takeOverFromGone(leased, present);
    report.takenOver += takenOver;

    const waiting = await redis.zrangebyscore(
      keys.sched,
      '-inf',
      now - config.lostDoorbellAfterMs,
      'LIMIT',
      0,
      SWEEP_BATCH,
    );
    for (const member of waiting) {
      if (await this.reviveDoorbell(member, keys.sched, now)) report.doorbellsRevived++;
    }
  }

  /** Re-rings the threads among `members` whose owner's presence has expired. */
  private async takeOverFromGone(members: string[], present: Map<string, Promise<boolean>>): Promise<number> {
    if (members.length === 0) return 0;
    const holders = this.redis.pipeline();
    for (const member of members)
      holders.hmget(this.queue.keys(decodeThread(member)).state, 'owner', 'fence');
    const replies = (await holders.exec()) ?? [];
    let taken = 0;
    for (const [i, [error, fields]] of replies.entries()) {
      if (error) throw error;
      const [owner, fence] = fields as (string | null)[];
      if (!owner || !fence || (await this.isPresent(owner, present))) continue;
      if (await this.queue.takeOver(members[i]!, owner, Number(fence))) taken++;
    }
    return taken;
  }

  private isPresent(owner: string, present: Map<string, Promise<boolean>>): Promise<boolean> {
    let answer = present.get(owner);
    if (!answer) {
      const key = workerKeys(this.queue.config.prefix, owner).presence;
      answer = this.redis.exists(key).then((count) => count === 1);
      present.set(owner, answer);
    }
    return answer;
  }

  private async reviveDoorbell(member: string, sched: string, now: number): Promise<boolean> {
    const epoch = Number(await this.redis.hget(this.queue.keys(decodeThread(member)).state, 'epoch'));
    if (await this.doorbell.pending(member, epoch)) {
      // Still in line behind other threads: look again one grace period from now.
      await this.redis.zadd(sched, 'XX', now, member);
      return false;
    }
    return this.queue.revive(member, 'doorbell', epoch);
  }
}
