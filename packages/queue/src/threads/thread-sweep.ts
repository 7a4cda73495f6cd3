import * as script from '../lua/queue-calls.js';
import type { QueueConfig } from '../queue-config.js';
import { bucketKeys, decodeThread, workerKeys } from '../thread-keys.js';
import { parseDirectDoorbell } from '../wake/doorbell.js';
import type { ThreadScripts } from './thread-scripts.js';

/** Who holds a thread's lease, as its state says: the owner and the fence it holds it under. */
export interface Holder {
  owner: string;
  fence: number;
}

/**
 * The sweeper's side of the thread state machine: scan a bucket for threads whose lease expired,
 * whose owner is gone or whose doorbell was lost, read what tells a lost thread from one still in
 * line, and ring each again once a script agrees.
 */
export class ThreadSweep {
  constructor(private readonly threads: ThreadScripts) {}

  get config(): Readonly<QueueConfig> {
    return this.threads.config;
  }

  /** Who holds each of `members` (as the scan answers them), where a lease is held; one round trip. */
  async holders(members: readonly string[]): Promise<(Holder | undefined)[]> {
    const reads = this.threads.redis.pipeline();
    for (const member of members)
      reads.hmget(this.threads.keys(decodeThread(member)).state, 'owner', 'fence');
    const replies = (await reads.exec()) ?? [];
    return replies.map(([error, fields]) => {
      if (error) throw error;
      const [owner, fence] = fields as (string | null)[];
      return owner && fence ? { owner, fence: Number(fence) } : undefined;
    });
  }

  /** The thread's scheduled epoch and the worker that ran it last, if any. */
  async scheduled(thread: string): Promise<{ epoch: number; owner: string | null }> {
    const [epoch, owner] = await this.threads.redis.hmget(this.threads.keys(thread).state, 'epoch', 'owner');
    return { epoch: Number(epoch), owner: owner ?? null };
  }

  /** Whether `owner` announces itself (its presence key exists, taking doorbells or not). */
  async isPresent(owner: string): Promise<boolean> {
    return (await this.threads.redis.exists(workerKeys(this.config.prefix, owner).presence)) === 1;
  }

  /** The agent processes `owner`'s warden reported it could not kill, or null when there are none. */
  survivorsOf(owner: string): Promise<string | null> {
    return this.threads.redis.get(workerKeys(this.config.prefix, owner).survivors);
  }

  /** The doorbells waiting in `owner`'s own list, as `thread\nepoch`. */
  async doorbellsOf(owner: string): Promise<Set<string>> {
    const items = await this.threads.redis.lrange(workerKeys(this.config.prefix, owner).doorbells, 0, -1);
    return new Set(
      items.map((item) => {
        const { thread, epoch } = parseDirectDoorbell(item);
        return `${thread}\n${epoch}`;
      }),
    );
  }

  /** Puts a thread still in line off for another grace period (its place in the bucket's schedule). */
  async lookAgainLater(member: string, now: number): Promise<void> {
    await this.threads.redis.zadd(this.threads.keys(decodeThread(member)).sched, 'XX', now, member);
  }

  /**
   * A sweeper's pass over `bucket` for `owner`: the threads with a reply due and, when `owner` took the
   * bucket's lock for this interval, the sweep's candidates. Undefined when there is nothing at all.
   */
  scanBucket(
    bucket: number,
    owner: string,
    limits: { sweepBatch: number; dueBatch: number },
  ): Promise<script.BucketScan | undefined> {
    const c = this.threads.config;
    return this.threads.scripts.run(script.sweepScan, bucketKeys(c.prefix, bucket), {
      ...limits,
      owner,
      lockMs: c.sweepIntervalMs,
      lostDoorbellAfterMs: c.lostDoorbellAfterMs,
    });
  }

  /** Rings a thread again whose lease expired or whose doorbell was lost; true when it was rung. */
  async revive(member: string, mode: 'lease' | 'doorbell', expectedEpoch = 0): Promise<boolean> {
    const k = this.threads.keys(decodeThread(member));
    const reply = await this.threads.scripts.run(script.revive, k, { member, mode, epoch: expectedEpoch });
    if (reply.status !== 'ring') return false;
    await this.threads.ring(k, reply.epoch);
    return true;
  }

  /**
   * A thread whose owner is gone: re-rung when `owner` still holds it under `fence`, so its batch is
   * re-delivered elsewhere without waiting for the lease to expire.
   */
  async takeOver(member: string, owner: string, fence: number): Promise<boolean> {
    const k = this.threads.keys(decodeThread(member));
    const reply = await this.threads.scripts.run(script.takeover, k, { member, owner, fence });
    if (reply.status !== 'ring') return false;
    await this.threads.ring(k, reply.epoch);
    return true;
  }
}
