import { redisClockReaches } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeaseLostError } from '../src/errors.js';
import { done, enqueueAll, type QueueFixture, queueFixture } from './fixture.js';

let f: QueueFixture;
beforeAll(async () => {
  f = await queueFixture();
});
afterAll(() => f.close());

describe('renew and fencing', () => {
  it('extends a held lease', async () => {
    const { queue } = await f.make({ leaseMs: 1_000 });
    await enqueueAll(queue, 'th', ['a']);
    const claim = await queue.claim('th', 1, 'owner-a');
    if (claim.kind !== 'batch') throw new Error('no batch');
    // A renewal in the claim's millisecond would give the same expiry: wait for Redis's clock to move on.
    const claimedAt = claim.batch.lease.expiresAt - queue.config.leaseMs;
    await redisClockReaches(f.redis, claimedAt + 1, { what: 'a millisecond after the claim' });
    expect(await queue.renew(claim.batch.lease)).toBeGreaterThan(claim.batch.lease.expiresAt);
  });

  it('fences out the old owner after a takeover: no renew, no commit, no fail, no abandon', async () => {
    const { queue } = await f.make({ leaseMs: 40 });
    await enqueueAll(queue, 'th', ['a']);
    const old = await queue.claim('th', 1, 'owner-a');
    if (old.kind !== 'batch') throw new Error('no batch');
    await f.leaseExpiry(old.batch.lease);
    const taken = await queue.claim('th', 1, 'owner-b');
    if (taken.kind !== 'batch') throw new Error('no takeover');

    await expect(queue.renew(old.batch.lease)).rejects.toBeInstanceOf(LeaseLostError);
    await expect(queue.commit(old.batch.lease, done)).rejects.toBeInstanceOf(LeaseLostError);
    await expect(queue.fail(old.batch.lease, 'x')).rejects.toBeInstanceOf(LeaseLostError);
    expect(await queue.abandon(old.batch.lease)).toBe(false);
    expect(await queue.history('th')).toEqual([]);

    expect(await queue.commit(taken.batch.lease, done)).toEqual({ kind: 'idle' });
    const [record] = await queue.history('th');
    expect(record).toMatchObject({ fence: 2, deliveries: 2, type: 'Continuation' });
  });

  it('fences the same owner’s older fence too', async () => {
    const { queue } = await f.make({ leaseMs: 40 });
    await enqueueAll(queue, 'th', ['a']);
    const first = await queue.claim('th', 1, 'owner-a');
    if (first.kind !== 'batch') throw new Error('no batch');
    await f.leaseExpiry(first.batch.lease);
    const second = await queue.claim('th', 1, 'owner-a');
    if (second.kind !== 'batch') throw new Error('no batch');
    await expect(queue.commit(first.batch.lease, done)).rejects.toBeInstanceOf(LeaseLostError);
    expect((await queue.commit(second.batch.lease, done)).kind).toBe('idle');
  });
});
