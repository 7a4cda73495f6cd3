import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimNow, done, enqueueAll, type QueueFixture, queueFixture } from './fixture.js';

let f: QueueFixture;
beforeAll(async () => {
  f = await queueFixture();
});
afterAll(() => f.close());

describe('thread controls', () => {
  it('pause keeps messages without ringing; resume rings', async () => {
    const { queue } = await f.make();
    await queue.pause('th');
    expect(await queue.enqueue('th', { id: 'a', body: 'x' })).toMatchObject({ rang: false });
    expect(await queue.state('th')).toMatchObject({ status: 'idle', paused: true, backlog: 1 });
    await queue.resume('th');
    expect(await queue.state('th')).toMatchObject({ status: 'scheduled', paused: false });
    expect((await claimNow(queue, 'th')).kind).toBe('batch');
  });

  it('a paused scheduled thread idles at claim and keeps its messages', async () => {
    const { queue } = await f.make();
    await enqueueAll(queue, 'th', ['a']);
    await queue.pause('th');
    expect(await claimNow(queue, 'th')).toEqual({ kind: 'paused' });
    expect(await queue.state('th')).toMatchObject({ status: 'idle', backlog: 1 });
  });

  it('drop-buffered removes waiting messages but never the in-flight batch', async () => {
    const { queue } = await f.make();
    await enqueueAll(queue, 'th', ['a']);
    const claim = await claimNow(queue, 'th');
    if (claim.kind !== 'batch') throw new Error('no batch');
    await enqueueAll(queue, 'th', ['b', 'c'], 2);
    expect(await queue.dropBuffered('th')).toBe(2);
    expect(await queue.commit(claim.batch.lease, done)).toEqual({ kind: 'idle' });
    expect((await queue.history('th'))[0]!.messages.map((m) => m.id)).toEqual(['m1']);
  });

  it('reset drops waiting messages and history and bumps the session generation', async () => {
    const { queue } = await f.make();
    await enqueueAll(queue, 'th', ['a']);
    const claim = await claimNow(queue, 'th');
    if (claim.kind !== 'batch') throw new Error('no batch');
    await queue.commit(claim.batch.lease, done);
    await enqueueAll(queue, 'th', ['b'], 2);
    expect(await queue.reset('th')).toEqual({ dropped: 1, generation: 1 });
    expect(await queue.history('th')).toEqual([]);
    expect(await queue.state('th')).toMatchObject({ generation: 1, backlog: 0 });
    await enqueueAll(queue, 'th', ['c'], 3);
    const next = await claimNow(queue, 'th');
    if (next.kind !== 'batch') throw new Error('no batch');
    expect(next.batch.generation).toBe(1);
  });
});
