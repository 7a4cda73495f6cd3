import { silentLogger } from '@tributary/observability';
import { redisClockReaches, waitFor } from '@tributary/testkit';
import { Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blockingConnection } from '../src/connections.js';
import { PresenceWriter } from '../src/presence-writer.js';
import { Sweeper } from '../src/sweeper.js';
import { keysOf } from '../src/testing.js';
import { workerKeys } from '../src/thread-keys.js';
import { type ThreadQueue, threadQueue } from '../src/threads/thread-queue.js';
import type { Doorbell } from '../src/wake/doorbell.js';
import { claimNow, type QueueFixture, queueFixture, turnAs } from './fixture.js';

let f: QueueFixture;
beforeAll(async () => {
  f = await queueFixture();
});
afterAll(() => f.close());

/** These passes are about revivals: the threads with a reply due go nowhere. */
const noReplies = () => {};

/** When `thread` was last scheduled (or looked at by a sweeper), on Redis's clock. */
async function scheduledAt(queue: ThreadQueue, thread: string): Promise<number> {
  const k = keysOf(queue, thread);
  return Number(await f.redis.zscore(k.sched, k.member));
}

/** Waits out the lost-doorbell grace period of `thread` on Redis's clock, the one the sweeper reads. */
async function graceOver(queue: ThreadQueue, thread: string): Promise<void> {
  const since = await scheduledAt(queue, thread);
  await redisClockReaches(f.redis, since + queue.config.lostDoorbellAfterMs, { what: 'the grace period' });
}

describe('sweeper', () => {
  it('re-rings a thread whose doorbell was lost, once the grace period has passed', async () => {
    // Long enough that the first sweep surely comes before it ends, even on a loaded machine.
    const { queue, doorbell } = await f.make({ lostDoorbellAfterMs: 500 });
    const lost: Doorbell = {
      ring: async () => {},
      pending: (m, e) => doorbell.pending(m, e),
      taken: (d, pool) => doorbell.taken(d, pool),
    };
    const lossy = threadQueue(f.redis, queue.config, lost);
    // Its last owner is gone, so the ring goes through the (lossy) shared doorbell.
    await turnAs(lossy, 'th', 'gone-worker');
    expect(await lossy.intake.enqueue('th', { id: 'a', body: 'x' })).toMatchObject({ rang: true });
    const sweeper = new Sweeper(queue.sweep, doorbell, 'sweeper-1', noReplies);

    expect(await sweeper.sweepOnce()).toEqual({
      leasesRevived: 0,
      doorbellsRevived: 0,
      takenOver: 0,
      heldBack: 0,
    });
    await graceOver(queue, 'th');
    await releaseSweepLocks(queue.config.prefix);
    expect(await sweeper.sweepOnce()).toEqual({
      leasesRevived: 0,
      doorbellsRevived: 1,
      takenOver: 0,
      heldBack: 0,
    });
    const state = await queue.admin.state('th');
    expect(state).toMatchObject({ status: 'scheduled', epoch: 3 });
    expect(await doorbell.pending(keysOf(queue, 'th').member, 3)).toBe(true);
  });

  it('reports a ring that failed after the message was accepted, and re-rings its thread', async () => {
    const { queue, doorbell } = await f.make({ lostDoorbellAfterMs: 200 });
    const failing: Doorbell = {
      ring: async () => {
        throw new Error('Redis refused the doorbell');
      },
      pending: (m, e) => doorbell.pending(m, e),
      taken: (d, pool) => doorbell.taken(d, pool),
    };
    const broken = threadQueue(f.redis, queue.config, failing);
    const accepted = await broken.intake.enqueue('th', { id: 'a', body: 'x' });
    expect(accepted).toMatchObject({ outcome: 'accepted', rang: false });
    expect(accepted.outcome === 'accepted' && String(accepted.ringError)).toContain(
      'Redis refused the doorbell',
    );
    // Durable all the same: the thread waits for the sweeper with its message.
    expect(await queue.admin.state('th')).toMatchObject({ status: 'scheduled', backlog: 1 });
    await graceOver(queue, 'th');
    const sweeper = new Sweeper(queue.sweep, doorbell, 'sweeper-1', noReplies);
    expect(await sweeper.sweepOnce()).toMatchObject({ doorbellsRevived: 1 });
    expect(await doorbell.pending(keysOf(queue, 'th').member, 2)).toBe(true);
  });

  it('leaves a thread alone while its doorbell is still waiting in line', async () => {
    const { queue, doorbell } = await f.make({ lostDoorbellAfterMs: 1, sweepIntervalMs: 1 });
    // Its last owner is gone: the ring is a shared BullMQ job, left waiting (no worker runs here).
    await turnAs(queue, 'th', 'gone-worker');
    await queue.intake.enqueue('th', { id: 'a', body: 'x' });
    const scheduled = await scheduledAt(queue, 'th');
    await graceOver(queue, 'th');
    expect(await new Sweeper(queue.sweep, doorbell, 's', noReplies).sweepOnce()).toEqual({
      leasesRevived: 0,
      doorbellsRevived: 0,
      takenOver: 0,
      heldBack: 0,
    });
    expect((await queue.admin.state('th')).epoch).toBe(2);
    // It did look: finding the doorbell pending, it put the thread off for another grace period.
    expect(await scheduledAt(queue, 'th')).toBeGreaterThan(scheduled);
  });

  it('re-rings a thread whose doorbell job failed before it claimed anything', async () => {
    const { queue, doorbell } = await f.make({ lostDoorbellAfterMs: 1, sweepIntervalMs: 1 });
    await turnAs(queue, 'th', 'gone-worker');
    const connection = blockingConnection(f.redis);
    const target = await doorbell.queueOf('th');
    const failing = new Worker(
      target.name,
      async () => {
        throw new Error('the worker broke before its claim');
      },
      { connection, prefix: target.opts.prefix },
    );
    await queue.intake.enqueue('th', { id: 'a', body: 'x' });
    // The warm-up turn's shared job (claimed by hand) fails too; this ring's is the one of epoch 2.
    await waitFor(async () => !(await doorbell.pending(keysOf(queue, 'th').member, 2)), {
      what: 'the doorbell job to fail',
    });
    await failing.close();
    connection.disconnect();
    expect(await doorbell.pending(keysOf(queue, 'th').member, 2)).toBe(false);
    await graceOver(queue, 'th');
    expect(await new Sweeper(queue.sweep, doorbell, 's', noReplies).sweepOnce()).toMatchObject({
      doorbellsRevived: 1,
    });
    expect(await doorbell.pending(keysOf(queue, 'th').member, 3)).toBe(true);
  });

  it('revives a thread whose owner’s lease expired, keeping its batch in flight', async () => {
    const { queue, doorbell } = await f.make({ leaseMs: 30, sweepIntervalMs: 1 });
    await queue.intake.enqueue('th', { id: 'a', body: 'x' });
    const claim = await claimNow(queue, 'th');
    if (claim.kind !== 'batch') throw new Error('no batch');
    await f.leaseExpiry(claim.batch.lease);
    expect(await new Sweeper(queue.sweep, doorbell, 's', noReplies).sweepOnce()).toEqual({
      leasesRevived: 1,
      doorbellsRevived: 0,
      takenOver: 0,
      heldBack: 0,
    });
    const again = await claimNow(queue, 'th', 'owner-b');
    if (again.kind !== 'batch') throw new Error('no batch');
    expect(again.batch.id).toBe(claim.batch.id);
  });

  it('lets one sweeper per bucket work at a time', async () => {
    const { queue, doorbell } = await f.make({ leaseMs: 30, sweepIntervalMs: 10_000, buckets: 1 });
    await queue.intake.enqueue('th', { id: 'a', body: 'x' });
    const claim = await claimNow(queue, 'th');
    if (claim.kind !== 'batch') throw new Error('no batch');
    await f.leaseExpiry(claim.batch.lease);
    const reports = await Promise.all(
      ['s1', 's2', 's3'].map((owner) => new Sweeper(queue.sweep, doorbell, owner, noReplies).sweepOnce()),
    );
    expect(reports.map((r) => r.leasesRevived).sort()).toEqual([0, 0, 1]);
  });

  it('takes a thread from an owner that is gone before its lease expires; the owner is fenced out', async () => {
    const { queue, doorbell } = await f.make({ leaseMs: 60_000 });
    await queue.intake.enqueue('th', { id: 'a', body: 'x' });
    const claim = await claimNow(queue, 'th', 'gone');
    if (claim.kind !== 'batch') throw new Error('no batch');
    // 'gone' never announced itself (or its presence expired): nothing waits for the 60 s lease.
    expect(await new Sweeper(queue.sweep, doorbell, 's', noReplies).sweepOnce()).toEqual({
      leasesRevived: 0,
      doorbellsRevived: 0,
      takenOver: 1,
      heldBack: 0,
    });
    expect(await queue.admin.state('th')).toMatchObject({ status: 'scheduled' });
    const again = await claimNow(queue, 'th', 'owner-b');
    if (again.kind !== 'batch') throw new Error('no batch');
    expect(again.batch).toMatchObject({ id: claim.batch.id, type: 'Continuation', deliveries: 2 });
    await expect(queue.turns.renew(claim.batch.lease)).rejects.toThrow('no longer held');
    await expect(
      queue.turns.commit(claim.batch.lease, { reply: 'late', stopReason: 'end_turn' }),
    ).rejects.toThrow('no longer held');
  });

  it('leaves the threads of an owner that is present, busy or not', async () => {
    const { queue, doorbell } = await f.make({ leaseMs: 60_000 });
    await queue.intake.enqueue('th', { id: 'a', body: 'x' });
    const presence = workerKeys(queue.config.prefix, 'alive').presence;
    await f.redis.set(presence, '0', 'PX', 60_000);
    const claim = await claimNow(queue, 'th', 'alive');
    if (claim.kind !== 'batch') throw new Error('no batch');
    expect((await new Sweeper(queue.sweep, doorbell, 's', noReplies).sweepOnce()).takenOver).toBe(0);
    expect(await queue.admin.state('th')).toMatchObject({ status: 'running', owner: 'alive' });
    await f.redis.del(presence);
    await releaseSweepLocks(queue.config.prefix);
    expect((await new Sweeper(queue.sweep, doorbell, 's', noReplies).sweepOnce()).takenOver).toBe(1);
  });

  it('holds back the threads of a dead owner whose warden reports agents it could not kill, until they are gone', async () => {
    const { queue, doorbell } = await f.make({ leaseMs: 3_000 });
    await queue.intake.enqueue('th', { id: 'a', body: 'x' });
    const claim = await claimNow(queue, 'th', 'dead');
    if (claim.kind !== 'batch') throw new Error('no batch');
    const warden = new PresenceWriter(f.redisHandle.url, queue.config.prefix, 'dead', () => {});
    try {
      // Its connection fails fast and may not be up yet, as the warden's retries allow for.
      await waitFor(
        () =>
          warden.holdFor([4242], 60_000).then(
            () => true,
            () => false,
          ),
        {
          what: 'the survivors written',
        },
      );
      await f.leaseExpiry(claim.batch.lease);
      const errors: unknown[] = [];
      const logger = { ...silentLogger, error: (fields: object) => errors.push(fields) };
      const sweeper = new Sweeper(queue.sweep, doorbell, 's', noReplies, logger);
      expect(await sweeper.sweepOnce()).toMatchObject({ leasesRevived: 0, takenOver: 0, heldBack: 1 });
      expect(await queue.admin.state('th')).toMatchObject({ status: 'running', owner: 'dead' });
      expect(errors).toEqual([expect.objectContaining({ owner: 'dead', survivors: '{"pids":[4242]}' })]);
      // Said once while it lasts.
      await releaseSweepLocks(queue.config.prefix);
      expect((await sweeper.sweepOnce()).heldBack).toBe(1);
      expect(errors).toHaveLength(1);

      await warden.withdraw();
      await releaseSweepLocks(queue.config.prefix);
      expect(await sweeper.sweepOnce()).toMatchObject({ leasesRevived: 1, heldBack: 0 });
    } finally {
      warden.close();
    }
  });

  it('reports the threads with a reply due on every pass, lock or not, and locks no idle bucket', async () => {
    const { queue, doorbell } = await f.make({ sweepIntervalMs: 60_000, buckets: 1 });
    const reported: string[][] = [];
    const sweeper = (owner: string) => new Sweeper(queue.sweep, doorbell, owner, (t) => reported.push(t));
    const lock = keysOf(queue, 'th').sweepLock;

    await sweeper('s1').sweepOnce();
    expect(reported).toEqual([]);
    // Nothing to sweep: an idle pass leaves no lock behind (and so writes nothing).
    expect(await f.redis.exists(lock)).toBe(0);

    await queue.intake.enqueue('th', { id: 'a', body: 'x' });
    const claim = await claimNow(queue, 'th');
    if (claim.kind !== 'batch') throw new Error('no batch');
    const outbound = [{ id: 'r1', payload: '{}' }];
    await queue.turns.commit(claim.batch.lease, { reply: 'done', stopReason: 'end_turn', outbound });
    await queue.intake.enqueue('th', { id: 'b', body: 'y' });
    await sweeper('s1').sweepOnce();
    // The scheduled thread made s1 lock the bucket; s2 still hears of the reply.
    expect(await f.redis.get(lock)).toBe('s1');
    await sweeper('s2').sweepOnce();
    expect(reported).toEqual([['th'], ['th']]);
  });
});

/** Each bucket's sweep lock on its own: in a Cluster the buckets live on different slots. */
async function releaseSweepLocks(prefix: string): Promise<void> {
  await Promise.all(Array.from({ length: 4 }, (_, b) => f.redis.del(`${prefix}:{b${b}}:sweeper`)));
}
