import { redisClockReaches } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keysOf } from '../src/testing.js';
import { claimNow, done, enqueueAll, type QueueFixture, queueFixture } from './fixture.js';

let f: QueueFixture;
beforeAll(async () => {
  f = await queueFixture();
});
afterAll(() => f.close());

describe('batch history', () => {
  it('records a committed batch with its events in order, bodies, reply, stop reason and timing', async () => {
    const { queue } = await f.make();
    await queue.intake.enqueue('th', { id: 'm1', body: 'check the build', lane: 'U-ada' });
    await queue.intake.enqueue('th', { id: 'm2', body: 'and e2e', origin: 'agent' });
    const claim = await claimNow(queue, 'th');
    if (claim.kind !== 'batch') throw new Error('no batch');
    // Inbox trimming after the commit must not take the record's bodies with it.
    await queue.turns.commit(claim.batch.lease, { reply: 'green', stopReason: 'end_turn' });
    expect(await queue.admin.state('th')).toMatchObject({ backlog: 0 });

    const [record] = await queue.admin.history('th');
    expect(record).toMatchObject({
      batchId: claim.batch.id,
      thread: 'th',
      type: 'UserRequest',
      status: 'complete',
      deliveries: 1,
      reply: 'green',
      stopReason: 'end_turn',
    });
    expect(record!.messages.map((m) => [m.seq, m.id, m.body, m.origin, m.lane])).toEqual([
      [1, 'm1', 'check the build', 'user', 'U-ada'],
      [2, 'm2', 'and e2e', 'agent', ''],
    ]);
    expect(record!.messages.map((m) => m.sid)).toEqual(claim.batch.messages.map((m) => m.streamId));
    expect(record!.claimedAt).toBeGreaterThanOrEqual(record!.messages[1]!.at);
    expect(record!.endedAt).toBeGreaterThanOrEqual(record!.claimedAt);
  });

  it('records a batch whose turn was cancelled as cancelled', async () => {
    const { queue } = await f.make();
    await enqueueAll(queue, 'th', ['long job']);
    const claim = await claimNow(queue, 'th');
    if (claim.kind !== 'batch') throw new Error('no batch');
    await queue.turns.commit(claim.batch.lease, { reply: 'partial', stopReason: 'cancelled' });
    expect((await queue.admin.history('th'))[0]).toMatchObject({ status: 'cancelled', reply: 'partial' });
  });

  it('marks failed attempts and the dead letter, then the complete commit of a later batch', async () => {
    const { queue } = await f.make({ maxFailures: 2, retryDelayMs: 0 });
    await enqueueAll(queue, 'th', ['poison']);
    const first = await claimNow(queue, 'th');
    if (first.kind !== 'batch') throw new Error('no batch');
    await queue.turns.fail(first.batch.lease, 'agent error');
    const second = await claimNow(queue, 'th', 'owner-b');
    if (second.kind !== 'batch') throw new Error('no batch');
    await enqueueAll(queue, 'th', ['fine'], 2);
    const after = await queue.turns.fail(second.batch.lease, 'agent error again');
    if (after.kind !== 'batch') throw new Error(`expected the next batch, got ${after.kind}`);
    await queue.turns.commit(after.batch.lease, done);

    const history = (await queue.admin.history('th')).reverse();
    expect(history.map((r) => [r.batchId, r.type, r.status, r.reason, r.deliveries])).toEqual([
      [first.batch.id, 'UserRequest', 'failed', 'agent error', 1],
      [first.batch.id, 'Continuation', 'dead', 'agent error again', 2],
      [after.batch.id, 'UserRequest', 'complete', undefined, 1],
    ]);
    expect(history[0]!.failures).toBe(1);
    expect(history[1]!.messages.map((m) => m.body)).toEqual(['poison']);
  });

  it('has no record of an interrupted batch until it completes, then marks it a continuation', async () => {
    const { queue } = await f.make({ leaseMs: 30 });
    await enqueueAll(queue, 'th', ['a']);
    const epoch = (await queue.admin.state('th')).epoch;
    const crashed = await queue.turns.claim('th', epoch, 'owner-a');
    if (crashed.kind !== 'batch') throw new Error('no batch');
    await f.leaseExpiry(crashed.batch.lease);
    expect(await queue.admin.history('th')).toEqual([]);

    const again = await queue.turns.claim('th', epoch, 'owner-b');
    if (again.kind !== 'batch') throw new Error('no batch');
    await queue.turns.commit(again.batch.lease, done);
    expect(await queue.admin.history('th')).toMatchObject([
      { batchId: crashed.batch.id, type: 'Continuation', status: 'complete', deliveries: 2 },
    ]);
  });

  it('records a batch dead-lettered at claim after too many deliveries as dead', async () => {
    const { queue } = await f.make({ maxDeliveries: 1, leaseMs: 30 });
    await enqueueAll(queue, 'th', ['crash']);
    const epoch = (await queue.admin.state('th')).epoch;
    const crashed = await queue.turns.claim('th', epoch, 'a');
    if (crashed.kind !== 'batch') throw new Error('no batch');
    await f.leaseExpiry(crashed.batch.lease);
    expect(await queue.turns.claim('th', epoch, 'b')).toEqual({ kind: 'empty' });
    expect(await queue.admin.history('th')).toMatchObject([
      { status: 'dead', reason: 'delivered 1 times without completing' },
    ]);
  });

  it('drops records older than historyMaxAgeMs', async () => {
    const maxAgeMs = 40;
    const { queue } = await f.make({ historyMaxAgeMs: maxAgeMs });
    const turn = async (body: string) => {
      await queue.intake.enqueue('th', { id: body, body });
      const claim = await claimNow(queue, 'th');
      if (claim.kind !== 'batch') throw new Error('no batch');
      await queue.turns.commit(claim.batch.lease, done);
    };
    await turn('old');
    // Ages are measured on record ids (Redis-clock milliseconds): wait until the old one is past the cut.
    const [old] = await f.redis.xrange(keysOf(queue, 'th').history, '-', '+');
    if (!old) throw new Error('no record');
    const oldMs = Number(old[0].split('-')[0]);
    await redisClockReaches(f.redis, oldMs + maxAgeMs + 1, { what: 'the old record to age out' });
    await turn('new');
    expect((await queue.admin.history('th')).map((r) => r.messages[0]!.body)).toEqual(['new']);
  });
});
