import {
  deletePrefix,
  type RedisHandle,
  redisClockReaches,
  startRedis,
  uniquePrefix,
} from '@tributary/testkit';
import type { Lease, TurnReport } from '../src/batch.js';
import { openConnection, type RedisClient } from '../src/connections.js';
import { type QueueConfig, queueConfig } from '../src/queue-config.js';
import type { ReplySink } from '../src/reply-sink.js';
import { type ThreadQueue, threadQueue } from '../src/threads/thread-queue.js';
import { BullDoorbell } from '../src/wake/doorbell.js';

/** One Redis per suite; every test gets its own key prefix, queue and doorbell. */
export interface QueueFixture {
  redisHandle: RedisHandle;
  redis: RedisClient;
  make(overrides?: Partial<QueueConfig>): Promise<{ queue: ThreadQueue; doorbell: BullDoorbell }>;
  /**
   * Waits until `lease` has run out on Redis's clock, as for an owner that crashed or froze: the
   * claim, revive and sweep scripts all treat it as expired from then on.
   */
  leaseExpiry(lease: Lease): Promise<void>;
  close(): Promise<void>;
}

export async function queueFixture(options: { private?: boolean } = {}): Promise<QueueFixture> {
  const redisHandle = await startRedis(options);
  const redis = openConnection(redisHandle.url, { kind: 'patient' });
  const made: { prefix: string; doorbell: BullDoorbell }[] = [];
  return {
    redisHandle,
    redis,
    async make(overrides = {}) {
      const config = queueConfig({ prefix: uniquePrefix('q'), buckets: 4, ...overrides });
      const doorbell = new BullDoorbell(redis, config);
      made.push({ prefix: config.prefix, doorbell });
      return { queue: threadQueue(redis, config, doorbell), doorbell };
    },
    leaseExpiry(lease) {
      return redisClockReaches(redis, lease.expiresAt, { what: `the lease of ${lease.owner} to expire` });
    },
    async close() {
      for (const { prefix, doorbell } of made) {
        await doorbell.close();
        await deletePrefix(redis, prefix);
      }
      redis.disconnect();
      await redisHandle.stop();
    },
  };
}

/** The reply sink of runners whose turns commit no replies: a reply reaching it is a test's mistake. */
export const noReplies: ReplySink = {
  async deliver({ id }) {
    throw new Error(`reply ${id} committed by turns that commit none`);
  },
};

/** What a turn that ended normally reports. */
export const done: TurnReport = { reply: 'done', stopReason: 'end_turn' };

/** Claims a thread under its current epoch, as a doorbell for that epoch would. */
export async function claimNow(queue: ThreadQueue, thread: string, owner = 'owner-a') {
  return queue.turns.claim(thread, (await queue.admin.state(thread)).epoch, owner);
}

/** Enqueues `bodies` in order as messages m1, m2, ... of `thread`. */
export async function enqueueAll(queue: ThreadQueue, thread: string, bodies: string[], from = 1) {
  for (const [i, body] of bodies.entries()) await queue.intake.enqueue(thread, { id: `m${from + i}`, body });
}

/**
 * Runs one turn of `thread` as `owner` by hand, so `owner` becomes the thread's last owner. With no
 * such worker alive, the thread's next ring goes to the shared BullMQ queue, as a new thread's does.
 */
export async function turnAs(queue: ThreadQueue, thread: string, owner: string) {
  await queue.intake.enqueue(thread, { id: `${owner}-warmup`, body: 'x' });
  const claim = await claimNow(queue, thread, owner);
  if (claim.kind !== 'batch') throw new Error('no batch');
  await queue.turns.commit(claim.batch.lease, done);
}
