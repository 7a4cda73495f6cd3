import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimNow, done, enqueueAll, type QueueFixture, queueFixture } from './fixture.js';

let f: QueueFixture;
beforeAll(async () => {
  f = await queueFixture();
});
afterAll(() => f.close());

describe('failed turns and dead letters', () => {
  it('retries the same batch after a delay, then dead-letters it and moves on', async () => {
    const { queue, doorbell } = await f.make({ maxFailures: 2, retryDelayMs: 60_000 });
    await enqueueAll(queue, 'th', ['poison']);
    const first = await claimNow(queue, 'th');
    if (first.kind !== 'batch') throw new Error('no batch');
    await queue.intake.enqueue('th', { id: 'm2', body: 'later' });
    expect(await queue.turns.fail(first.batch.lease, 'agent said no')).toEqual({
      kind: 'retry',
      delayMs: 60_000,
    });
    const epoch = (await queue.admin.state('th')).epoch;
    const job = await (await doorbell.queueOf('th')).getJob(`t-th-${epoch}`);
    expect(await job?.getState()).toBe('delayed');

    const second = await claimNow(queue, 'th');
    if (second.kind !== 'batch') throw new Error('no batch');
    expect(second.batch.id).toBe(first.batch.id);
    const after = await queue.turns.fail(second.batch.lease, 'agent said no again');
    // The thread is not stuck behind its poison batch: the next message comes at once.
    if (after.kind !== 'batch') throw new Error(`expected the next batch, got ${after.kind}`);
    expect(after.batch.messages.map((m) => m.id)).toEqual(['m2']);

    const [dead] = await queue.admin.deadLetters('th');
    expect(dead).toMatchObject({ batchId: first.batch.id, reason: 'agent said no again', failures: 2 });
    expect(dead!.messages.map((m) => [m.id, m.body])).toEqual([['m1', 'poison']]);
  });

  it('splits a batch that keeps failing: each message alone, in order; only the one failing alone is set aside', async () => {
    const { queue } = await f.make({ maxFailures: 2, retryDelayMs: 0 });
    await enqueueAll(queue, 'th', ['poison', 'fine', 'also fine']);
    const whole = await claimNow(queue, 'th');
    if (whole.kind !== 'batch') throw new Error('no batch');
    expect(whole.batch.messages.map((m) => m.id)).toEqual(['m1', 'm2', 'm3']);
    expect(await queue.turns.fail(whole.batch.lease, 'the agent crashed')).toEqual({
      kind: 'retry',
      delayMs: 0,
    });
    const again = await claimNow(queue, 'th');
    if (again.kind !== 'batch') throw new Error('no batch');
    expect(await queue.turns.fail(again.batch.lease, 'the agent crashed again')).toEqual({
      kind: 'retry',
      delayMs: 0,
      split: true,
    });
    // Arrived while the batch failed: it waits behind the split messages, in its place.
    await queue.intake.enqueue('th', { id: 'm4', body: 'newer' });

    const alone = await claimNow(queue, 'th');
    if (alone.kind !== 'batch') throw new Error('no batch');
    expect(alone.batch.messages.map((m) => m.id)).toEqual(['m1']);
    expect(alone.batch.id).not.toBe(whole.batch.id);
    // Its message reached an agent before, in the batch it was split from.
    expect(alone.batch.type).toBe('Continuation');
    await queue.turns.fail(alone.batch.lease, 'the agent crashed on m1');
    const retried = await claimNow(queue, 'th');
    if (retried.kind !== 'batch') throw new Error('no batch');
    const next = await queue.turns.fail(retried.batch.lease, 'the agent crashed on m1 again');
    if (next.kind !== 'batch') throw new Error(`expected the next batch, got ${next.kind}`);
    expect(next.batch.messages.map((m) => m.id)).toEqual(['m2']);
    const last = await queue.turns.commit(next.batch.lease, done);
    if (last.kind !== 'batch') throw new Error(`expected the next batch, got ${last.kind}`);
    expect(last.batch.messages.map((m) => m.id)).toEqual(['m3']);
    // Past the split batch, batches are whole again.
    await queue.intake.enqueue('th', { id: 'm5', body: 'newest' });
    const whole2 = await queue.turns.commit(last.batch.lease, done);
    if (whole2.kind !== 'batch') throw new Error(`expected the next batch, got ${whole2.kind}`);
    expect(whole2.batch.messages.map((m) => m.id)).toEqual(['m4', 'm5']);

    const dead = await queue.admin.deadLetters('th');
    expect(dead.map((d) => d.messages.map((m) => m.id))).toEqual([['m1']]);
    const history = (await queue.admin.history('th')).reverse();
    expect(history.map((r) => [r.status, r.messages.map((m) => m.id), r.split ?? false])).toEqual([
      ['failed', ['m1', 'm2', 'm3'], false],
      ['failed', ['m1', 'm2', 'm3'], true],
      ['failed', ['m1'], false],
      ['dead', ['m1'], false],
      ['complete', ['m2'], false],
      ['complete', ['m3'], false],
    ]);
  });

  it('dead-letters a whole batch at once when the failure is the agent’s, not a message’s', async () => {
    const { queue } = await f.make({ maxFailures: 1 });
    await enqueueAll(queue, 'th', ['a', 'b']);
    const claim = await claimNow(queue, 'th');
    if (claim.kind !== 'batch') throw new Error('no batch');
    expect((await queue.turns.fail(claim.batch.lease, 'cannot sign in', { splits: false })).kind).toBe(
      'idle',
    );
    const dead = await queue.admin.deadLetters('th');
    expect(dead.map((d) => d.messages.map((m) => m.id))).toEqual([['m1', 'm2']]);
  });

  it('re-drives a dead-lettered batch back into the inbox and rings the thread', async () => {
    const { queue } = await f.make({ maxFailures: 1 });
    await enqueueAll(queue, 'th', ['a', 'b']);
    const claim = await claimNow(queue, 'th');
    if (claim.kind !== 'batch') throw new Error('no batch');
    await queue.turns.fail(claim.batch.lease, 'boom', { splits: false });
    const [dead] = await queue.admin.deadLetters('th');

    expect(await queue.admin.redrive('th', dead!.batchId)).toBe(2);
    expect(await queue.admin.deadLetters('th')).toEqual([]);
    const again = await claimNow(queue, 'th');
    if (again.kind !== 'batch') throw new Error('no batch');
    expect(again.batch.messages.map((m) => [m.id, m.body])).toEqual([
      ['m1', 'a'],
      ['m2', 'b'],
    ]);
    expect(await queue.admin.redrive('th', dead!.batchId)).toBe(0);
  });

  it('splits a batch that keeps killing its owners, then dead-letters the message that does so alone', async () => {
    const { queue } = await f.make({ maxDeliveries: 2, leaseMs: 30 });
    await enqueueAll(queue, 'th', ['crash', 'fine']);
    const lease = async (owner: string) => {
      const claim = await queue.turns.claim('th', (await queue.admin.state('th')).epoch, owner);
      if (claim.kind !== 'batch') throw new Error(`expected a batch, got ${claim.kind}`);
      await f.leaseExpiry(claim.batch.lease);
      return claim.batch.messages.map((m) => m.id);
    };
    expect(await lease('a')).toEqual(['m1', 'm2']);
    expect(await lease('b')).toEqual(['m1', 'm2']);
    // Delivered twice without completing: split, the first message alone.
    expect(await lease('c')).toEqual(['m1']);
    expect(await lease('d')).toEqual(['m1']);
    const survivor = await queue.turns.claim('th', (await queue.admin.state('th')).epoch, 'e');
    if (survivor.kind !== 'batch') throw new Error(`expected a batch, got ${survivor.kind}`);
    expect(survivor.batch.messages.map((m) => m.id)).toEqual(['m2']);
    const dead = await queue.admin.deadLetters('th');
    expect(dead.map((d) => [d.reason, d.messages.map((m) => m.id)])).toEqual([
      ['delivered 2 times without completing', ['m1']],
    ]);
  });

  it('dead-letters a batch that keeps killing its owners', async () => {
    const { queue } = await f.make({ maxDeliveries: 2, leaseMs: 30 });
    await enqueueAll(queue, 'th', ['crash']);
    const epoch = (await queue.admin.state('th')).epoch;
    for (const owner of ['a', 'b']) {
      const claim = await queue.turns.claim('th', epoch, owner);
      if (claim.kind !== 'batch') throw new Error(`expected a batch, got ${claim.kind}`);
      await f.leaseExpiry(claim.batch.lease);
    }
    expect(await queue.turns.claim('th', epoch, 'c')).toEqual({ kind: 'empty' });
    const [dead] = await queue.admin.deadLetters('th');
    expect(dead).toMatchObject({ reason: 'delivered 2 times without completing', deliveries: 2 });
  });
});
