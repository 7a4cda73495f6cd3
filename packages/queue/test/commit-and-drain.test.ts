import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Batch } from '../src/batch.js';
import { keysOf } from '../src/testing.js';
import { workerKeys } from '../src/thread-keys.js';
import type { NextStep } from '../src/threads/thread-turns.js';
import { parseDirectDoorbell } from '../src/wake/doorbell.js';
import { PRESENCE } from '../src/worker-presence.js';
import { claimNow, done, enqueueAll, type QueueFixture, queueFixture } from './fixture.js';

let f: QueueFixture;
beforeAll(async () => {
  f = await queueFixture();
});
afterAll(() => f.close());

function nextBatch(step: NextStep): Batch {
  if (step.kind !== 'batch') throw new Error(`expected a batch, got ${step.kind}`);
  return step.batch;
}

describe('commit and drain', () => {
  it('drains everything that arrived during the turn into the next batch, then releases', async () => {
    const { queue } = await f.make();
    await enqueueAll(queue, 'th', ['first']);
    const claim = await claimNow(queue, 'th');
    if (claim.kind !== 'batch') throw new Error('no batch');
    await enqueueAll(queue, 'th', ['b', 'c', 'd'], 2);

    const second = nextBatch(await queue.turns.commit(claim.batch.lease, done));
    expect(second.messages.map((m) => m.id)).toEqual(['m2', 'm3', 'm4']);
    expect(second.lease.fence).toBe(claim.batch.lease.fence);
    expect(second.id > claim.batch.id).toBe(true);

    expect(await queue.turns.commit(second.lease, done)).toEqual({ kind: 'idle' });
    expect(await queue.admin.state('th')).toMatchObject({ status: 'idle', backlog: 0 });
    // Released in the same script that saw the inbox empty, so the next message rings again.
    expect(await queue.intake.enqueue('th', { id: 'm5', body: 'later' })).toMatchObject({ rang: true });
  });

  it('keeps at most historyLimit records, newest first', async () => {
    const { queue } = await f.make({ historyLimit: 2 });
    for (let turn = 1; turn <= 3; turn++) {
      await queue.intake.enqueue('th', { id: `m${turn}`, body: 'x' });
      const claim = await claimNow(queue, 'th');
      if (claim.kind !== 'batch') throw new Error('no batch');
      await queue.turns.commit(claim.batch.lease, done);
    }
    const history = await queue.admin.history('th');
    expect(history.map((r) => r.messages.map((m) => m.id))).toEqual([['m3'], ['m2']]);
  });

  it('yields the doorbell after K consecutive turns', async () => {
    const { queue, doorbell } = await f.make({ yieldAfterTurns: 2, maxBatchMessages: 1 });
    await enqueueAll(queue, 'th', ['a', 'b', 'c', 'd']);
    const claim = await claimNow(queue, 'th');
    if (claim.kind !== 'batch') throw new Error('no batch');
    const second = nextBatch(await queue.turns.commit(claim.batch.lease, done));
    const before = (await queue.admin.state('th')).epoch;
    expect(await queue.turns.commit(second.lease, done)).toEqual({ kind: 'yielded' });
    const after = await queue.admin.state('th');
    expect(after).toMatchObject({ status: 'scheduled', epoch: before + 1, backlog: 2 });
    expect(await doorbell.pending(keysOf(queue, 'th').member, after.epoch)).toBe(true);
  });

  it('yields to the back of its own worker’s line while that worker takes doorbells, not to any worker', async () => {
    const { queue, doorbell } = await f.make({ yieldAfterTurns: 1, maxBatchMessages: 1 });
    const own = workerKeys(queue.config.prefix, 'owner-a');
    await f.redis.set(own.presence, PRESENCE.taking, 'PX', 60_000);
    await enqueueAll(queue, 'th', ['a', 'b']);
    const claim = await claimNow(queue, 'th');
    if (claim.kind !== 'batch') throw new Error('no batch');
    expect(await queue.turns.commit(claim.batch.lease, done)).toEqual({ kind: 'yielded' });
    const { epoch } = await queue.admin.state('th');
    // The session is where the thread yielded; the shared queue holds nothing for it.
    const listed = (await f.redis.lrange(own.doorbells, 0, -1)).map(parseDirectDoorbell);
    expect(listed).toEqual([expect.objectContaining({ thread: 'th', epoch })]);
    expect(await doorbell.pending(keysOf(queue, 'th').member, epoch)).toBe(false);
  });

  it('stops draining a paused thread after the running turn commits', async () => {
    const { queue } = await f.make();
    await enqueueAll(queue, 'th', ['a']);
    const claim = await claimNow(queue, 'th');
    if (claim.kind !== 'batch') throw new Error('no batch');
    await enqueueAll(queue, 'th', ['b'], 2);
    await queue.admin.pause('th');
    expect(await queue.turns.commit(claim.batch.lease, done)).toEqual({ kind: 'paused' });
    expect(await queue.admin.state('th')).toMatchObject({ status: 'idle', backlog: 1 });
  });
});
