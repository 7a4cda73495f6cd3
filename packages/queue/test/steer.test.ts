import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Batch } from '../src/batch.js';
import { LeaseLostError } from '../src/errors.js';
import { controlChannelName } from '../src/stores/control-channel.js';
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

describe('steering the in-flight batch', () => {
  it('takes what waits into the batch under the lease; the commit acknowledges it with the batch', async () => {
    const { queue } = await f.make();
    await enqueueAll(queue, 'th', ['first']);
    const batch = await running(queue, 'th');
    await enqueueAll(queue, 'th', ['second', 'third'], 2);

    const taken = await queue.steer(batch);
    expect(taken.kind === 'taken' && taken.messages.map((m) => m.id)).toEqual(['m2', 'm3']);
    const through = taken.kind === 'taken' ? taken.messages.at(-1)!.streamId : '';
    expect(await queue.commit(batch.lease, { ...done, deliveredThrough: through })).toEqual({ kind: 'idle' });
    const [record] = await queue.history('th');
    expect(record!.messages.map((m) => m.id)).toEqual(['m1', 'm2', 'm3']);
  });

  it('leaves what the turn never received for the next batch, in order', async () => {
    const { queue } = await f.make();
    await enqueueAll(queue, 'th', ['first']);
    const batch = await running(queue, 'th');
    await enqueueAll(queue, 'th', ['refused', 'later'], 2);
    expect((await queue.steer(batch)).kind).toBe('taken');

    const next = await queue.commit(batch.lease, { ...done, deliveredThrough: batch.messages[0]!.streamId });
    expect(next.kind === 'batch' && ids(next.batch)).toEqual(['m2', 'm3']);
  });

  it('is refused to a fenced-out holder, and to the holder of an earlier batch', async () => {
    const { queue } = await f.make({ leaseMs: 200 });
    await enqueueAll(queue, 'th', ['first']);
    const stale = await running(queue, 'th');
    await f.leaseExpiry(stale.lease);
    expect(await queue.revive(queue.keys('th').member, 'lease')).toBe(true);
    await expect(queue.steer(stale)).rejects.toBeInstanceOf(LeaseLostError);

    const current = await running(queue, 'th');
    await enqueueAll(queue, 'th', ['second'], 2);
    const next = await queue.commit(current.lease, done);
    if (next.kind !== 'batch') throw new Error('no next batch');
    await expect(queue.steer(current)).rejects.toBeInstanceOf(LeaseLostError);
  });

  it('keeps the batch caps: a re-delivered batch is no larger than any other', async () => {
    const { queue } = await f.make({ maxBatchMessages: 2 });
    await enqueueAll(queue, 'th', ['first']);
    const batch = await running(queue, 'th');
    await enqueueAll(queue, 'th', ['second', 'third'], 2);
    const taken = await queue.steer(batch);
    expect(taken.kind === 'taken' && taken.messages.map((m) => m.id)).toEqual(['m2']);
    expect(await queue.steer(batch)).toEqual({ kind: 'full' });
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
      expect(await queue.steer(batch)).toMatchObject({ kind: 'taken' });
      await enqueueAll(queue, 'th', ['armed'], 3);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(heard.map((raw) => JSON.parse(raw))).toEqual([{ thread: 'th', action: 'steer' }]);
    } finally {
      subscriber.disconnect();
    }
  });
});
