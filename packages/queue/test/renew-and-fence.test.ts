import { redisClockReaches } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeaseLostError } from '../src/errors.js';
import type { Lease, ThreadQueue } from '../src/index.js';
import { SessionRecords } from '../src/stores/session-records.js';
import { keysOf } from '../src/testing.js';
import { done, enqueueAll, type QueueFixture, queueFixture } from './fixture.js';

let f: QueueFixture;
beforeAll(async () => {
  f = await queueFixture();
});
afterAll(() => f.close());

/** Thread `th`'s batch claimed by owner-a, whose lease expired, then taken over by `by`. */
async function takeover(queue: ThreadQueue, by = 'owner-b'): Promise<{ old: Lease; taken: Lease }> {
  await enqueueAll(queue, 'th', ['a']);
  const old = await queue.turns.claim('th', 1, 'owner-a');
  if (old.kind !== 'batch') throw new Error('no batch');
  await f.leaseExpiry(old.batch.lease);
  const taken = await queue.turns.claim('th', 1, by);
  if (taken.kind !== 'batch') throw new Error('no takeover');
  return { old: old.batch.lease, taken: taken.batch.lease };
}

describe('renew and fencing', () => {
  it('extends a held lease', async () => {
    const { queue } = await f.make({ leaseMs: 1_000 });
    await enqueueAll(queue, 'th', ['a']);
    const claim = await queue.turns.claim('th', 1, 'owner-a');
    if (claim.kind !== 'batch') throw new Error('no batch');
    // A renewal in the claim's millisecond would give the same expiry: wait for Redis's clock to move on.
    const claimedAt = claim.batch.lease.expiresAt - queue.config.leaseMs;
    await redisClockReaches(f.redis, claimedAt + 1, { what: 'a millisecond after the claim' });
    expect(await queue.turns.renew(claim.batch.lease)).toBeGreaterThan(claim.batch.lease.expiresAt);
  });

  it('fences out the old owner after a takeover: no renew, no commit, no fail, no abandon', async () => {
    const { queue } = await f.make({ leaseMs: 40 });
    const { old, taken } = await takeover(queue);

    await expect(queue.turns.renew(old)).rejects.toBeInstanceOf(LeaseLostError);
    await expect(queue.turns.commit(old, done)).rejects.toBeInstanceOf(LeaseLostError);
    await expect(queue.turns.fail(old, 'x')).rejects.toBeInstanceOf(LeaseLostError);
    expect(await queue.turns.abandon(old)).toBe(false);
    expect(await queue.admin.history('th')).toEqual([]);

    expect(await queue.turns.commit(taken, done)).toEqual({ kind: 'idle' });
    const [record] = await queue.admin.history('th');
    expect(record).toMatchObject({ fence: 2, deliveries: 2, type: 'Continuation' });
  });

  it('records the session a turn was answered on with its commit, only under the live fence', async () => {
    const { queue } = await f.make({ leaseMs: 40 });
    const records = new SessionRecords(f.redis, (thread) => keysOf(queue, thread));
    const answeredOn = (sessionId: string) => ({ sessionId, agent: 'agent', cwd: '/w', generation: 3 });
    const { old, taken } = await takeover(queue);

    await expect(queue.turns.commit(old, { ...done, session: answeredOn('s-old') })).rejects.toBeInstanceOf(
      LeaseLostError,
    );
    expect(await records.get('th')).toBeUndefined();
    await queue.turns.commit(taken, { ...done, session: answeredOn('s-new') });
    expect(await records.get('th')).toMatchObject({
      ...answeredOn('s-new'),
      worker: 'owner-b',
      fence: taken.fence,
    });
    const ttl = await f.redis.pttl(keysOf(queue, 'th').session);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(queue.config.idleTtlMs);
  });

  it('fences the same owner’s older fence too', async () => {
    const { queue } = await f.make({ leaseMs: 40 });
    const { old: first, taken: second } = await takeover(queue, 'owner-a');
    await expect(queue.turns.commit(first, done)).rejects.toBeInstanceOf(LeaseLostError);
    expect((await queue.turns.commit(second, done)).kind).toBe('idle');
  });
});
