import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Batch } from '../src/batch.js';
import { LeaseLostError } from '../src/errors.js';
import { BatchHistory } from '../src/stores/batch-history.js';
import { controlChannelName } from '../src/stores/control-channel.js';
import { MessageReceipts } from '../src/stores/message-receipts.js';
import { keysOf } from '../src/testing.js';
import { claimNow, done, enqueueAll, type QueueFixture, queueFixture } from './fixture.js';

let f: QueueFixture;
beforeAll(async () => {
  f = await queueFixture();
});
afterAll(() => f.close());

async function running(queue: Awaited<ReturnType<QueueFixture['make']>>['queue'], thread: string) {
  const claim = await claimNow(queue, thread);
  if (claim.kind !== 'batch') throw new Error('no batch');
  return claim.batch;
}

function ids(batch: Batch | { messages: { id: string }[] }): string[] {
  return batch.messages.map((m) => m.id);
}

/** The stream id of the batch's last message: where a turn that received only the batch stands. */
const lastOf = (batch: Batch) => batch.messages.at(-1)!.streamId;

type Taken = Awaited<ReturnType<Awaited<ReturnType<QueueFixture['make']>>['queue']['turns']['steer']>>;
const takenIds = (taken: Taken) => (taken.kind === 'taken' ? taken.messages.map((m) => m.id) : taken.kind);

describe('steering the in-flight batch', () => {
  it('takes what waits into the batch under the lease; the commit acknowledges it with the batch', async () => {
    const { queue } = await f.make();
    await enqueueAll(queue, 'th', ['first']);
    const batch = await running(queue, 'th');
    await enqueueAll(queue, 'th', ['second', 'third'], 2);

    const taken = await queue.turns.steer(batch, lastOf(batch));
    expect(taken.kind === 'taken' && taken.messages.map((m) => m.id)).toEqual(['m2', 'm3']);
    const through = taken.kind === 'taken' ? taken.messages.at(-1)!.streamId : '';
    expect(await queue.turns.commit(batch.lease, { ...done, deliveredThrough: through })).toEqual({
      kind: 'idle',
    });
    const [record] = await queue.admin.history('th');
    expect(record!.messages.map((m) => m.id)).toEqual(['m1', 'm2', 'm3']);
  });

  it('leaves what the turn never received for the next batch, in order', async () => {
    const { queue } = await f.make();
    await enqueueAll(queue, 'th', ['first']);
    const batch = await running(queue, 'th');
    await enqueueAll(queue, 'th', ['refused', 'later'], 2);
    expect((await queue.turns.steer(batch, lastOf(batch))).kind).toBe('taken');

    const next = await queue.turns.commit(batch.lease, {
      ...done,
      deliveredThrough: batch.messages[0]!.streamId,
    });
    expect(next.kind === 'batch' && ids(next.batch)).toEqual(['m2', 'm3']);
  });

  it('is refused to a fenced-out holder, and to the holder of an earlier batch', async () => {
    const { queue } = await f.make({ leaseMs: 200 });
    await enqueueAll(queue, 'th', ['first']);
    const stale = await running(queue, 'th');
    await f.leaseExpiry(stale.lease);
    expect(await queue.sweep.revive(keysOf(queue, 'th').member, 'lease')).toBe(true);
    await expect(queue.turns.steer(stale, lastOf(stale))).rejects.toBeInstanceOf(LeaseLostError);

    const current = await running(queue, 'th');
    await enqueueAll(queue, 'th', ['second'], 2);
    const next = await queue.turns.commit(current.lease, done);
    if (next.kind !== 'batch') throw new Error('no next batch');
    await expect(queue.turns.steer(current, lastOf(current))).rejects.toBeInstanceOf(LeaseLostError);
  });

  it('keeps the batch caps: a re-delivered batch is no larger than any other', async () => {
    const { queue } = await f.make({ maxBatchMessages: 2 });
    await enqueueAll(queue, 'th', ['first']);
    const batch = await running(queue, 'th');
    await enqueueAll(queue, 'th', ['second', 'third'], 2);
    const taken = await queue.turns.steer(batch, lastOf(batch));
    expect(taken.kind === 'taken' && taken.messages.map((m) => m.id)).toEqual(['m2']);
    const through = taken.kind === 'taken' ? taken.messages.at(-1)!.streamId : '';
    expect(await queue.turns.steer(batch, through)).toEqual({ kind: 'full' });
  });

  it('offers again what a refused steer took, before anything newer: a repair acknowledges only what it received', async () => {
    const { queue } = await f.make();
    await enqueueAll(queue, 'th', ['first']);
    const batch = await running(queue, 'th');
    await enqueueAll(queue, 'th', ['refused'], 2);
    // The first attempt's steer takes m2 into the batch; the agent refuses it.
    expect(takenIds(await queue.turns.steer(batch, lastOf(batch)))).toEqual(['m2']);
    await enqueueAll(queue, 'th', ['later'], 3);
    // The repair's fresh attempt received the batch as it was (m1): its steer starts there.
    const taken = await queue.turns.steer(batch, lastOf(batch));
    expect(takenIds(taken)).toEqual(['m2', 'm3']);
    const through = taken.kind === 'taken' ? taken.messages.at(-1)!.streamId : '';
    expect(await queue.turns.commit(batch.lease, { ...done, deliveredThrough: through })).toEqual({
      kind: 'idle',
    });
    const [record] = await queue.admin.history('th');
    expect(ids(record!)).toEqual(['m1', 'm2', 'm3']);
  });

  it('drops a message deleted while a refused steer held it, at the commit and at the next steer', async () => {
    const { queue } = await f.make();
    await enqueueAll(queue, 'th', ['first']);
    const batch = await running(queue, 'th');
    await enqueueAll(queue, 'th', ['deleted', 'kept'], 2);
    expect(takenIds(await queue.turns.steer(batch, lastOf(batch)))).toEqual(['m2', 'm3']);
    // Taken, not yet received: the delete cannot tell, and records it as of a dispatched message.
    const removal = { action: 'delete', messageId: 'm2', idempotencyKey: 'm2@delete' } as const;
    expect(await queue.intake.revise('th', removal)).toBe('dispatched');
    // The agent refused the steer; the next pass gives m2 back and offers only what is still wanted.
    expect(takenIds(await queue.turns.steer(batch, lastOf(batch)))).toEqual(['m3']);
    const receipts = new MessageReceipts(
      f.redis,
      (thread) => keysOf(queue, thread),
      new BatchHistory(f.redis, (thread) => keysOf(queue, thread), queue.config.historyLimit),
    );
    expect(await receipts.receipt('th', 'm2')).toMatchObject({ status: 'deleted' });

    await enqueueAll(queue, 'th', ['also deleted'], 4);
    const m3 = (await queue.turns.steer(batch, lastOf(batch))) as Extract<Taken, { kind: 'taken' }>;
    expect(
      await queue.intake.revise('th', { ...removal, messageId: 'm4', idempotencyKey: 'm4@delete' }),
    ).toBe('dispatched');
    // The turn received m3 only (refused m4): the commit acknowledges m3 and drops m4.
    const through = m3.messages.find((m) => m.id === 'm3')!.streamId;
    expect(await queue.turns.commit(batch.lease, { ...done, deliveredThrough: through })).toEqual({
      kind: 'idle',
    });
    expect(ids((await queue.admin.history('th'))[0]!)).toEqual(['m1', 'm3']);
    expect((await queue.admin.state('th')).backlog).toBe(0);
  });

  it('announces arrivals on the control channel only once the running batch is armed', async () => {
    const { queue } = await f.make();
    const subscriber = f.redis.duplicate();
    const heard: string[] = [];
    subscriber.on('message', (_channel: string, raw: string) => heard.push(raw));
    await subscriber.subscribe(controlChannelName(queue.config.prefix));
    try {
      await enqueueAll(queue, 'th', ['first']);
      const batch = await running(queue, 'th');
      await enqueueAll(queue, 'th', ['unarmed'], 2);
      expect(await queue.turns.steer(batch, lastOf(batch))).toMatchObject({ kind: 'taken' });
      await enqueueAll(queue, 'th', ['armed'], 3);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(heard.map((raw) => JSON.parse(raw))).toEqual([{ thread: 'th', action: 'steer' }]);
    } finally {
      subscriber.disconnect();
    }
  });
});
