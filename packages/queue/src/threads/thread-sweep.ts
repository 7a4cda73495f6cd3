import * as script from '../lua/queue-calls.js';
import type { QueueConfig } from '../queue-config.js';
import { bucketKeys, decodeThread, type ThreadKeys } from '../thread-keys.js';
import type { ThreadScripts } from './thread-scripts.js';

/**
 * The sweeper's side of the thread state machine: scan a bucket for threads whose lease expired,
 * whose owner is gone or whose doorbell was lost, and ring each again once a script agrees.
 */
export class ThreadSweep {
  constructor(private readonly threads: ThreadScripts) {}

  get config(): Readonly<QueueConfig> {
    return this.threads.config;
  }

  /** A thread's keys, for the sweeper's reads of who holds it. */
  keys(thread: string): ThreadKeys {
    return this.threads.keys(thread);
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
