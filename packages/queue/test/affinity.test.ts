import { waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Batch } from '../src/batch.js';
import { doorbellJobId, parseDirectDoorbell } from '../src/doorbells.js';
import { workerKeys } from '../src/thread-keys.js';
import type { ThreadQueue } from '../src/thread-queue.js';
import type { TurnHandler } from '../src/turn-loop.js';
import { type RunnerEvents, TurnRunner } from '../src/turn-runner.js';
import { PRESENCE } from '../src/worker-presence.js';
import { done, type QueueFixture, queueFixture, readyDoorbells, turnAs } from './fixture.js';

let f: QueueFixture;
beforeAll(async () => {
  f = await queueFixture();
});
afterAll(() => f.close());

type Presence = (typeof PRESENCE)[keyof typeof PRESENCE];

async function announce(queue: ThreadQueue, owner: string, value: Presence) {
  await f.redis.set(workerKeys(queue.config.prefix, owner).presence, value, 'PX', 60_000);
}

const directList = (queue: ThreadQueue, owner: string) =>
  f.redis.lrange(workerKeys(queue.config.prefix, owner).doorbells, 0, -1);

describe('ringing with session affinity', () => {
  it('hands the doorbell to the last owner while it takes doorbells; the shared one waits as fallback', async () => {
    const { queue, doorbell } = await f.make({ affinityWaitMs: 60_000 });
    await turnAs(queue, 'th', 'w1');
    await announce(queue, 'w1', PRESENCE.taking);
    await queue.enqueue('th', { id: 'm2', body: 'x' });
    const { epoch } = await queue.state('th');

    expect((await directList(queue, 'w1')).map((d) => JSON.parse(d))).toEqual([{ thread: 'th', epoch }]);
    const job = await doorbell.queueOf('th').getJob(doorbellJobId(queue.keys('th').member, epoch));
    expect(job?.data).toEqual({ thread: 'th', epoch, fallback: true });
    expect(await job?.getState()).toBe('delayed');
  });

  it('hands the doorbell over inside the enqueue script once it knows the last owner, and relearns it', async () => {
    const { queue, doorbell } = await f.make({ affinityWaitMs: 60_000 });
    const rings: string[] = [];
    const ring = doorbell.ring.bind(doorbell);
    doorbell.ring = (thread, member, epoch, options) => {
      rings.push(options && 'prefer' in options ? 'preferring' : 'fallback only');
      return ring(thread, member, epoch, options);
    };
    await announce(queue, 'w1', PRESENCE.taking);
    await announce(queue, 'w2', PRESENCE.taking);
    const directOf = async (owner: string) =>
      (await directList(queue, owner)).map((item) => parseDirectDoorbell(item));
    const turnOn = async (owner: string, id: string) => {
      await queue.enqueue('th', { id, body: 'x' });
      const { epoch } = await queue.state('th');
      const claim = await queue.claim('th', epoch, owner);
      if (claim.kind !== 'batch') throw new Error('no batch');
      await queue.commit(claim.batch.lease, done);
      return epoch;
    };

    await turnAs(queue, 'th', 'w1');
    // This ring names w1 as the last owner: rung from here (a push script beside the shared add).
    const second = await turnOn('w1', 'm2');
    expect(rings).toEqual(['preferring']);
    // Now the enqueue script hands it to w1 itself; only the fallback is added from here.
    const third = await turnOn('w1', 'm3');
    expect(rings).toEqual(['preferring', 'fallback only']);
    expect(await directOf('w1')).toEqual([
      { thread: 'th', epoch: second },
      { thread: 'th', epoch: third },
    ]);
    const fallback = await doorbell.queueOf('th').getJob(doorbellJobId(queue.keys('th').member, third));
    expect(fallback?.data).toEqual({ thread: 'th', epoch: third, fallback: true });
    expect(await fallback?.getState()).toBe('delayed');

    // w2 ran the last turn: the guess (w1) is wrong, so the ring prefers w2 from here and learns it.
    await turnAs(queue, 'th', 'w2');
    await queue.enqueue('th', { id: 'm4', body: 'x' });
    const fourth = (await queue.state('th')).epoch;
    expect(rings.at(-1)).toBe('preferring');
    expect(await directOf('w2')).toEqual([{ thread: 'th', epoch: fourth }]);
    expect((await directOf('w1')).map((d) => d.epoch)).not.toContain(fourth);
  });

  it.each<[string, Presence | undefined]>([
    ['is gone', undefined],
    ['is shutting down', PRESENCE.retiring],
  ])('rings the shared queue at once when the last owner %s', async (_, presence) => {
    const { queue, doorbell } = await f.make();
    await turnAs(queue, 'th', 'w1');
    if (presence) await announce(queue, 'w1', presence);
    await queue.enqueue('th', { id: 'm2', body: 'x' });
    const { epoch } = await queue.state('th');

    expect(await directList(queue, 'w1')).toEqual([]);
    expect(await readyDoorbells(f.redis, queue, 'th')).not.toContainEqual({ thread: 'th', epoch });
    const job = await doorbell.queueOf('th').getJob(doorbellJobId(queue.keys('th').member, epoch));
    expect(job?.data).toMatchObject({ thread: 'th', epoch });
    expect(await job?.getState()).toBe('waiting');
  });

  it('rings through the bucket’s ready list, for any worker, when affinity is off', async () => {
    const { queue, doorbell } = await f.make({ affinity: false });
    await turnAs(queue, 'th', 'w1');
    await announce(queue, 'w1', PRESENCE.taking);
    await queue.enqueue('th', { id: 'm2', body: 'x' });
    const { epoch } = await queue.state('th');

    expect(await directList(queue, 'w1')).toEqual([]);
    // The warm-up turn's doorbell was never popped: it is still first in line, and stale.
    expect(await readyDoorbells(f.redis, queue, 'th')).toEqual([
      { thread: 'th', epoch: epoch - 1 },
      { thread: 'th', epoch },
    ]);
    expect(await doorbell.jobCounts()).toMatchObject({ waiting: 0, delayed: 0 });
  });
});

describe('turn runners with session affinity', () => {
  const started: TurnRunner[] = [];
  afterAll(() => Promise.all(started.map((r) => r.close())));

  type Made = Awaited<ReturnType<QueueFixture['make']>>;

  async function runner(
    { queue, doorbell }: Made,
    handler: TurnHandler,
    concurrency = 2,
    events?: RunnerEvents,
  ) {
    const r = new TurnRunner({ queue, doorbell, connection: f.redis, handler, concurrency, events });
    await r.start();
    started.push(r);
    return r;
  }

  it('keeps a thread on the worker that ran its last turn, one ring after another', async () => {
    const made = await f.make({ affinityWaitMs: 60_000 });
    const { queue, doorbell } = made;
    const owners: string[] = [];
    const handler: TurnHandler = async (batch) => {
      owners.push(batch.lease.owner);
      return done;
    };
    await Promise.all([runner(made, handler), runner(made, handler), runner(made, handler)]);
    for (let i = 1; i <= 8; i++) {
      await queue.enqueue('th', { id: `m${i}`, body: 'x' });
      await waitFor(async () => (await queue.history('th')).length === i, { what: `turn ${i}` });
      await waitFor(async () => (await queue.state('th')).status === 'idle', { what: 'idle' });
    }
    // With a 60 s fallback wait, a turn that did not go to its preferred worker would not finish here.
    expect(new Set(owners.slice(1))).toEqual(new Set([owners[0]]));
    // Served directly: the shared fallback doorbells were withdrawn, not left to fire later.
    await waitFor(async () => (await doorbell.queueOf('th').getDelayedCount()) === 0, {
      what: 'no fallback left',
    });
  });

  it('keeps a thread for its busy last owner, which runs it when a slot frees, while another worker idles', async () => {
    const made = await f.make({ affinityWaitMs: 60_000 });
    const { queue } = made;
    const letGo: (() => void)[] = [];
    const ran: { thread: string; owner: string }[] = [];
    const handler: TurnHandler = async (batch) => {
      ran.push({ thread: batch.lease.thread, owner: batch.lease.owner });
      if (batch.lease.thread === 'long') await new Promise<void>((resolve) => letGo.push(resolve));
      return done;
    };
    const a = await runner(made, handler, 1);
    await queue.enqueue('kept', { id: 'k1', body: 'x' });
    await waitFor(async () => (await queue.state('kept')).status === 'idle', { what: 'the first turn on A' });
    await queue.enqueue('long', { id: 'l1', body: 'x' });
    await waitFor(() => letGo.length === 1, { what: 'A busy with a long turn' });
    const b = await runner(made, handler, 1);
    await queue.enqueue('kept', { id: 'k2', body: 'x' });
    // B is free, but the thread's session lives in A: A was handed the doorbell, and the shared one
    // only waits as its fallback (a minute here), so B cannot take the thread.
    const fallback = doorbellJobId(queue.keys('kept').member, (await queue.state('kept')).epoch);
    expect(await made.doorbell.queueOf('kept').getJobState(fallback)).toBe('delayed');
    letGo.shift()!();
    await waitFor(() => ran.filter((r) => r.thread === 'kept').length === 2, {
      what: 'the kept thread again',
    });
    expect(ran.filter((r) => r.thread === 'kept').map((r) => r.owner)).toEqual([a.owner, a.owner]);
    expect(ran.some((r) => r.owner === b.owner)).toBe(false);
  });

  it('falls back to the shared queue when the preferred worker never takes its doorbell', async () => {
    const made = await f.make({ affinityWaitMs: 100 });
    const { queue } = made;
    await turnAs(queue, 'th', 'frozen-worker');
    await announce(queue, 'frozen-worker', PRESENCE.taking);
    const served: Batch[] = [];
    await runner(made, async (batch) => {
      served.push(batch);
      return done;
    });
    await queue.enqueue('th', { id: 'm2', body: 'x' });
    await waitFor(() => served.length === 1, { what: 'the fallback turn' });
    expect(served[0]!.messages.map((m) => m.id)).toEqual(['m2']);
    expect(await directList(queue, 'frozen-worker')).toHaveLength(1);
  });

  it('hands a shared doorbell back while direct turns hold every slot, so another worker runs it', async () => {
    const made = await f.make({ affinityWaitMs: 60_000 });
    const { queue, doorbell } = made;
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const ran: { thread: string; owner: string }[] = [];
    const handler: TurnHandler = async (batch) => {
      ran.push({ thread: batch.lease.thread, owner: batch.lease.owner });
      if (batch.lease.thread === 'busy' && ran.length > 1) await held;
      return done;
    };
    let takenByA = 0;
    const a = await runner(made, handler, 1, { doorbellTaken: () => takenByA++ });
    await queue.enqueue('busy', { id: 'm1', body: 'x' });
    await waitFor(async () => (await queue.state('busy')).status === 'idle', { what: 'first turn' });
    const presence = workerKeys(queue.config.prefix, a.owner).presence;
    await waitFor(async () => (await f.redis.get(presence)) === PRESENCE.taking, {
      what: 'A announcing itself',
    });
    await queue.enqueue('busy', { id: 'm2', body: 'x' });
    await waitFor(() => ran.length === 2, { what: 'the direct turn holding the only slot' });
    expect(ran[1]!.owner).toBe(a.owner);

    // The only shared job from here on is `other`'s (`busy`'s fallback is delayed by a minute);
    // `other`'s last owner is gone, so it rings the shared queue, not its bucket's ready list.
    await turnAs(queue, 'other', 'gone-worker');
    const takenBefore = takenByA;
    await queue.enqueue('other', { id: 'o1', body: 'x' });
    const job = doorbellJobId(queue.keys('other').member, (await queue.state('other')).epoch);
    await waitFor(() => takenByA > takenBefore, { what: 'runner A taking the shared doorbell' });
    // Taken with no free slot, it must go back to the queue rather than wait in A for the slot.
    await waitFor(
      async () => ['delayed', 'waiting'].includes(await doorbell.queueOf('other').getJobState(job)),
      {
        what: 'runner A handing the doorbell back',
      },
    );
    expect((await queue.state('other')).status).toBe('scheduled');

    const b = await runner(made, handler, 1);
    await waitFor(() => ran.some((r) => r.thread === 'other'), { what: 'the other thread’s turn' });
    expect(ran.find((r) => r.thread === 'other')!.owner).toBe(b.owner);
    release();
  });

  it('announces itself while taking doorbells, busy or not, then shutting down; withdraws once drained', async () => {
    const { queue, doorbell } = await f.make();
    // Each turn waits until the test lets it end.
    const turnsLetGo: (() => void)[] = [];
    const r = new TurnRunner({
      queue,
      doorbell,
      connection: f.redis,
      concurrency: 1,
      handler: async () => {
        await new Promise<void>((resolve) => turnsLetGo.push(resolve));
        return done;
      },
    });
    const presence = workerKeys(queue.config.prefix, r.owner).presence;
    const announced = async (value: Presence) => (await f.redis.get(presence)) === value;
    await r.start();
    await waitFor(() => announced(PRESENCE.taking), { what: 'taking doorbells' });
    await queue.enqueue('th', { id: 'm1', body: 'x' });
    await waitFor(() => turnsLetGo.length === 1, { what: 'the first turn' });
    // Its only slot is busy: ringers still hand it the thread's doorbells.
    expect(await announced(PRESENCE.taking)).toBe(true);
    turnsLetGo.shift()!();
    await waitFor(async () => (await queue.state('th')).status === 'idle', { what: 'the first commit' });
    await queue.enqueue('th', { id: 'm2', body: 'x' });
    await waitFor(() => turnsLetGo.length === 1, { what: 'the second turn' });
    // Closing with a turn running: still present (its thread stays its own), taking no doorbells.
    const closing = r.close(60_000);
    await waitFor(() => announced(PRESENCE.retiring), { what: 'shutting down' });
    turnsLetGo.shift()!();
    await closing;
    expect(await f.redis.exists(presence)).toBe(0);
    expect((await queue.history('th')).length).toBe(2);
  });
});
