import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ThreadControls } from '../src/stores/thread-controls.js';
import { keysOf } from '../src/testing.js';
import { claimNow, done, enqueueAll, type QueueFixture, queueFixture } from './fixture.js';

let f: QueueFixture;
beforeAll(async () => {
  f = await queueFixture();
});
afterAll(() => f.close());

describe('thread controls', () => {
  it('pause keeps messages without ringing; resume rings', async () => {
    const { queue } = await f.make();
    await enqueueAll(queue, 'th', ['a']);
    const claim = await claimNow(queue, 'th');
    if (claim.kind !== 'batch') throw new Error('no batch');
    await queue.turns.commit(claim.batch.lease, done);
    expect(await queue.admin.pause('th')).toBe(true);
    expect(await queue.intake.enqueue('th', { id: 'b', body: 'x' })).toMatchObject({ rang: false });
    expect(await queue.admin.state('th')).toMatchObject({ status: 'idle', paused: true, backlog: 1 });
    expect(await queue.admin.resume('th')).toBe(true);
    expect(await queue.admin.state('th')).toMatchObject({ status: 'scheduled', paused: false });
    expect((await claimNow(queue, 'th')).kind).toBe('batch');
  });

  it('pause, resume and reset of a thread Redis knows nothing of create no key', async () => {
    const { queue } = await f.make();
    expect(await queue.admin.pause('ghost')).toBe(false);
    expect(await queue.admin.resume('ghost')).toBe(false);
    expect(
      await new ThreadControls(f.redis, (thread) => keysOf(queue, thread), queue.config).reset('ghost'),
    ).toBeUndefined();
    expect(await queue.admin.known('ghost')).toBe(false);
    const k = keysOf(queue, 'ghost');
    expect(await f.redis.exists(k.state, k.paused)).toBe(0);
  });

  it('a paused scheduled thread idles at claim and keeps its messages', async () => {
    const { queue } = await f.make();
    await enqueueAll(queue, 'th', ['a']);
    await queue.admin.pause('th');
    expect(await claimNow(queue, 'th')).toEqual({ kind: 'paused' });
    expect(await queue.admin.state('th')).toMatchObject({ status: 'idle', backlog: 1 });
  });

  it('cancel-all removes waiting messages but never the in-flight batch', async () => {
    const { queue } = await f.make();
    await enqueueAll(queue, 'th', ['a']);
    const claim = await claimNow(queue, 'th');
    if (claim.kind !== 'batch') throw new Error('no batch');
    await enqueueAll(queue, 'th', ['b', 'c'], 2);
    expect(
      await new ThreadControls(f.redis, (thread) => keysOf(queue, thread), queue.config).cancelAll('th'),
    ).toEqual({ dropped: 2 });
    expect(await queue.turns.commit(claim.batch.lease, done)).toEqual({ kind: 'idle' });
    expect((await queue.admin.history('th'))[0]!.messages.map((m) => m.id)).toEqual(['m1']);
  });

  it('reset drops waiting messages and history and bumps the session generation', async () => {
    const { queue } = await f.make();
    await enqueueAll(queue, 'th', ['a']);
    const claim = await claimNow(queue, 'th');
    if (claim.kind !== 'batch') throw new Error('no batch');
    await queue.turns.commit(claim.batch.lease, done);
    await enqueueAll(queue, 'th', ['b'], 2);
    expect(
      await new ThreadControls(f.redis, (thread) => keysOf(queue, thread), queue.config).reset('th'),
    ).toEqual({ dropped: 1, generation: 1 });
    expect(await queue.admin.history('th')).toEqual([]);
    expect(await queue.admin.state('th')).toMatchObject({ generation: 1, backlog: 0 });
    await enqueueAll(queue, 'th', ['c'], 3);
    const next = await claimNow(queue, 'th');
    if (next.kind !== 'batch') throw new Error('no batch');
    expect(next.batch.generation).toBe(1);
  });
});
