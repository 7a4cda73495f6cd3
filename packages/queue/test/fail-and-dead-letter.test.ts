import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimNow, enqueueAll, type QueueFixture, queueFixture } from './fixture.js';

let f: QueueFixture;
beforeAll(async () => {
  f = await queueFixture();
});
afterAll(() => f.close());

describe('failed turns and dead letters', () => {
  it('retries the same batch after a delay, then dead-letters it and moves on', async () => {
    const { queue, doorbell } = await f.make({ maxFailures: 2, retryDelayMs: 60_000 });
    await enqueueAll(queue, 'th', ['poison', 'next']);
    await queue.enqueue('th', { id: 'm3', body: 'later' });
    const first = await claimNow(queue, 'th');
    if (first.kind !== 'batch') throw new Error('no batch');
    expect(await queue.fail(first.batch.lease, 'agent said no')).toEqual({ kind: 'retry', delayMs: 60_000 });
    const epoch = (await queue.state('th')).epoch;
    const job = await doorbell.queueOf('th').getJob(`t-th-${epoch}`);
    expect(await job?.getState()).toBe('delayed');

    const second = await claimNow(queue, 'th');
    if (second.kind !== 'batch') throw new Error('no batch');
    expect(second.batch.id).toBe(first.batch.id);
    const after = await queue.fail(second.batch.lease, 'agent said no again');
    // The thread is not stuck behind its poison batch: the next message comes at once.
    expect(after.kind).toBe('idle');

    const [dead] = await queue.deadLetters('th');
    expect(dead).toMatchObject({ batchId: first.batch.id, reason: 'agent said no again', failures: 2 });
    expect(dead!.messages.map((m) => [m.id, m.body])).toEqual([
      ['m1', 'poison'],
      ['m2', 'next'],
      ['m3', 'later'],
    ]);
  });

  it('re-drives a dead-lettered batch back into the inbox and rings the thread', async () => {
    const { queue } = await f.make({ maxFailures: 1 });
    await enqueueAll(queue, 'th', ['a', 'b']);
    const claim = await claimNow(queue, 'th');
    if (claim.kind !== 'batch') throw new Error('no batch');
    await queue.fail(claim.batch.lease, 'boom');
    const [dead] = await queue.deadLetters('th');

    expect(await queue.redrive('th', dead!.batchId)).toBe(2);
    expect(await queue.deadLetters('th')).toEqual([]);
    const again = await claimNow(queue, 'th');
    if (again.kind !== 'batch') throw new Error('no batch');
    expect(again.batch.messages.map((m) => [m.id, m.body])).toEqual([
      ['m1', 'a'],
      ['m2', 'b'],
    ]);
    expect(await queue.redrive('th', dead!.batchId)).toBe(0);
  });

  it('dead-letters a batch that keeps killing its owners', async () => {
    const { queue } = await f.make({ maxDeliveries: 2, leaseMs: 30 });
    await enqueueAll(queue, 'th', ['crash']);
    const epoch = (await queue.state('th')).epoch;
    for (const owner of ['a', 'b']) {
      const claim = await queue.claim('th', epoch, owner);
      if (claim.kind !== 'batch') throw new Error(`expected a batch, got ${claim.kind}`);
      await f.leaseExpiry(claim.batch.lease);
    }
    expect(await queue.claim('th', epoch, 'c')).toEqual({ kind: 'empty' });
    const [dead] = await queue.deadLetters('th');
    expect(dead).toMatchObject({ reason: 'delivered 2 times without completing', deliveries: 2 });
  });
});
