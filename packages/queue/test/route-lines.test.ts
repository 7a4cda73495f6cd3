import { type LogSink, silentLogger } from '@tributary/observability';
import { uniquePrefix, waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_POOL, queueConfig } from '../src/queue-config.js';
import { Store } from '../src/store.js';
import { TurnLimits } from '../src/stores/turn-limits.js';
import { BullDoorbell, doorbellJobId } from '../src/wake/doorbell.js';
import { LINE_QUANTUM, type LineTiming, RouteLines } from '../src/wake/route-lines.js';
import { noReplies, type QueueFixture, queueFixture } from './fixture.js';

let f: QueueFixture;
beforeAll(async () => {
  f = await queueFixture();
});
afterAll(() => f.close());

/** Threads are named for their route: `flood-3` is route flood's. */
const routeOf = async (thread: string) => ({ pool: DEFAULT_POOL, route: thread.split('-')[0]! });

async function fairDoorbell(timing: Partial<LineTiming> = {}) {
  const config = queueConfig({ prefix: uniquePrefix('lines'), buckets: 4 });
  const doorbell = new BullDoorbell(f.redis, config, routeOf, timing);
  const lines = new RouteLines(f.redis, config.prefix, timing);
  const limits = new TurnLimits(f.redis, config.prefix);
  const queue = await doorbell.queueOf('any');
  /** The shared queue's waiting doorbells, first to be taken first, as `thread@epoch`. */
  const waiting = async () => (await queue.getWaiting()).map((job) => `${job.data.thread}@${job.data.epoch}`);
  return { doorbell, lines, limits, waiting, close: () => doorbell.close() };
}

const flood = Array.from({ length: 10 }, (_, i) => `flood-${i}`);

describe("a route's line in front of its pool's doorbell queue", () => {
  it("lets a busy route's first doorbells in and keeps the rest, so a quiet route's goes in behind only those", async () => {
    const { doorbell, lines, waiting, close } = await fairDoorbell();
    try {
      for (const thread of flood) await doorbell.ring(thread, thread, 1);
      await doorbell.ring('quiet-1', 'quiet-1', 1);

      expect(await waiting()).toEqual(['flood-0@1', 'flood-1@1', 'quiet-1@1']);
      expect(await lines.length({ pool: DEFAULT_POOL, route: 'flood' })).toBe(flood.length - LINE_QUANTUM);
      expect(await doorbell.pending('flood-9', 1)).toBe(true);
      expect(await doorbell.pending('flood-9', 2)).toBe(false);
    } finally {
      await close();
    }
  });

  it('moves up one as each of its doorbells is taken, oldest first', async () => {
    const { doorbell, waiting, close } = await fairDoorbell();
    try {
      for (const thread of flood) await doorbell.ring(thread, thread, 1);
      await doorbell.taken({ thread: 'flood-0', epoch: 1, route: 'flood' }, DEFAULT_POOL);
      await doorbell.taken({ thread: 'flood-1', epoch: 1, route: 'flood' }, DEFAULT_POOL);

      // The taken jobs are still there (nothing consumed them here): the line let in two more.
      expect(await waiting()).toEqual(['flood-0@1', 'flood-1@1', 'flood-2@1', 'flood-3@1']);
      // A doorbell from before lines (no route) moves nothing.
      await doorbell.taken({ thread: 'flood-2', epoch: 1 }, DEFAULT_POOL);
      expect(await waiting()).toHaveLength(4);
    } finally {
      await close();
    }
  });

  it('lets a route in by its published weight, and rings a thread again with its newest epoch in its place', async () => {
    const { doorbell, lines, waiting, close } = await fairDoorbell();
    try {
      await lines.publishWeights(new Map([['flood', 2]]));
      expect(await lines.weights()).toEqual({ flood: 2 });
      for (const thread of flood) await doorbell.ring(thread, thread, 1);
      // flood-7 rings again (say its doorbell was revived) while it waits in the line.
      await doorbell.ring('flood-7', 'flood-7', 2);
      expect(await waiting()).toEqual(['flood-0@1', 'flood-1@1', 'flood-2@1', 'flood-3@1']);

      for (const thread of flood.slice(0, 7)) {
        await doorbell.taken({ thread, epoch: 1, route: 'flood' }, DEFAULT_POOL);
      }
      const queue = await doorbell.queueOf('flood-7');
      expect(await queue.getJob(doorbellJobId('flood-7', 2))).toBeDefined();
      expect(await queue.getJob(doorbellJobId('flood-7', 1))).toBeUndefined();
      // A thread already let in and rung again goes in at once with its new epoch.
      await doorbell.ring('flood-0', 'flood-0', 2);
      expect(await queue.getJob(doorbellJobId('flood-0', 2))).toBeDefined();
    } finally {
      await close();
    }
  });

  it('keeps the newest epoch of a thread, and frees a place only for the epoch that took it', async () => {
    const { doorbell, lines, waiting, close } = await fairDoorbell();
    const place = { pool: DEFAULT_POOL, route: 'flood' };
    try {
      for (const thread of flood.slice(0, 3)) await doorbell.ring(thread, thread, 2);
      // A slow ringer's older epoch lands after the newer one: the line keeps the newer.
      await doorbell.ring('flood-2', 'flood-2', 1);
      expect(await lines.holds(place, 'flood-2', 2)).toBe(true);

      // flood-0 is rung again while let in: its newer doorbell goes in beside the older one.
      await doorbell.ring('flood-0', 'flood-0', 3);
      expect(await waiting()).toEqual(['flood-0@2', 'flood-1@2', 'flood-0@3']);
      // Its older doorbell is taken: the place is the newer one's still, so nothing more is let in.
      await doorbell.taken({ thread: 'flood-0', epoch: 2, route: 'flood' }, DEFAULT_POOL);
      expect(await lines.length(place)).toBe(1);
      // Taken again (a redelivery) it frees nothing either; the newer one frees the place.
      await doorbell.taken({ thread: 'flood-0', epoch: 2, route: 'flood' }, DEFAULT_POOL);
      expect(await lines.length(place)).toBe(1);
      await doorbell.taken({ thread: 'flood-0', epoch: 3, route: 'flood' }, DEFAULT_POOL);
      expect(await lines.length(place)).toBe(0);
      expect((await waiting()).at(-1)).toBe('flood-2@2');
    } finally {
      await close();
    }
  });

  it('keeps a pool named like its own keys apart from them', async () => {
    const config = queueConfig({ prefix: uniquePrefix('lines'), buckets: 4 });
    const doorbell = new BullDoorbell(f.redis, config, async () => ({ pool: 'weights', route: 'routes' }));
    const lines = new RouteLines(f.redis, config.prefix);
    try {
      await lines.publishWeights(new Map([['routes', 1]]));
      for (const thread of flood.slice(0, 3)) await doorbell.ring(thread, thread, 1);
      expect(await doorbell.lined('weights')).toBe(1);
      expect(await lines.weights()).toEqual({ routes: 1 });
    } finally {
      await doorbell.close();
    }
  });

  it('finds let-in doorbells gone from the queue untaken as the sweeper asks after a lined thread', async () => {
    const { doorbell, lines, waiting, close } = await fairDoorbell();
    try {
      // flood-0 was let in, but its ringer died before adding it to the queue.
      await lines.ring(await routeOf('flood-0'), 'flood-0', 1);
      // flood-1 was let in and added, then served by a worker from before lines, which did not say so.
      await doorbell.ring('flood-1', 'flood-1', 1);
      await (await (await doorbell.queueOf('flood-1')).getJob(doorbellJobId('flood-1', 1)))!.remove();
      await doorbell.ring('flood-2', 'flood-2', 1);
      expect(await waiting()).toEqual([]);

      // The sweeper finds flood-2 waiting with no doorbell in the queue: it is in its line.
      expect(await doorbell.pending('flood-2', 1)).toBe(true);
      expect(await waiting()).toEqual(['flood-2@1']);
    } finally {
      await close();
    }
  });

  it('forgets a let-in doorbell after a while even when nobody asks', async () => {
    const place = { pool: DEFAULT_POOL, route: 'flood' };
    const lines = new RouteLines(f.redis, uniquePrefix('lines'), { letInTtlMs: 300 });
    for (const thread of flood.slice(0, 3)) await lines.ring(place, thread, 1);
    expect(await lines.move(place, [])).toEqual([]);
    await waitFor(async () => (await lines.move(place, [])).length === 1, {
      what: 'the let-in doorbells to be forgotten',
      timeoutMs: 5_000,
    });
    expect(await lines.length(place)).toBe(0);
  });
});

describe("a line held back by its route's turn limit (docs/adr/0064)", () => {
  const MINUTE = 60_000;
  const place = { pool: DEFAULT_POOL, route: 'flood' };

  it('lets a doorbell in only with a turn slot held for its thread, and the next one as a turn ends', async () => {
    const { doorbell, lines, limits, waiting, close } = await fairDoorbell();
    try {
      await limits.publishTable(new Map([['flood', 1]]));
      for (const thread of flood.slice(0, 4)) await doorbell.ring(thread, thread, 1);
      // Room for two by its weight, but only one turn at once: the others wait in the line.
      expect(await waiting()).toEqual(['flood-0@1']);
      expect(await lines.length(place)).toBe(3);
      // The slot is held for the thread let in: another thread's turn does not take it (it is put back).
      expect(await limits.take('flood', 'flood-3', MINUTE)).toMatchObject({ taken: false });
      await doorbell.taken({ thread: 'flood-0', epoch: 1, route: 'flood' }, DEFAULT_POOL);
      expect(await limits.take('flood', 'flood-0', MINUTE)).toEqual({ taken: true, limit: 1 });
      // Taken and turning: nothing more goes in until the turn ends.
      expect(await waiting()).toEqual(['flood-0@1']);

      // The turn ends; the thread put back that waited longest gets the slot, then the line moves.
      expect(await limits.free('flood', 'flood-0', MINUTE)).toBe('flood-3');
      await doorbell.moveLine('flood-0');
      expect(await lines.length(place)).toBe(3);
      expect(await limits.free('flood', 'flood-3', MINUTE)).toBeUndefined();
      await doorbell.moveLine('flood-3');
      expect(await waiting()).toEqual(['flood-0@1', 'flood-1@1']);
      // A route without a limit is let in by its weight alone.
      for (const thread of ['quiet-0', 'quiet-1', 'quiet-2']) await doorbell.ring(thread, thread, 1);
      expect((await waiting()).filter((bell) => bell.startsWith('quiet'))).toHaveLength(LINE_QUANTUM);
    } finally {
      await close();
    }
  });

  it('lets a thread that holds a slot in without another, and frees the slot of a doorbell that served nothing', async () => {
    const { doorbell, limits, waiting, close } = await fairDoorbell({ graceMs: 200 });
    try {
      await limits.publishTable(new Map([['flood', 1]]));
      expect(await limits.take('flood', 'flood-0', MINUTE)).toMatchObject({ taken: true });
      // Rung again during its turn: it holds the route's only slot, so it goes in.
      await doorbell.ring('flood-0', 'flood-0', 2);
      await doorbell.ring('flood-1', 'flood-1', 1);
      expect(await waiting()).toEqual(['flood-0@2']);
      await limits.free('flood', 'flood-0', MINUTE);
      await doorbell.moveLine('flood-0');
      expect(await waiting()).toEqual(['flood-0@2', 'flood-1@1']);

      // flood-1's doorbell is taken and finds nothing to serve (its turn never takes the slot held
      // for it): the slot is free again after the grace, and the line moves on at the next ask.
      await doorbell.ring('flood-2', 'flood-2', 1);
      await doorbell.taken({ thread: 'flood-1', epoch: 1, route: 'flood' }, DEFAULT_POOL);
      expect(await waiting()).not.toContain('flood-2@1');
      await new Promise((resolve) => setTimeout(resolve, 300));
      await doorbell.moveLine('flood-1');
      expect(await waiting()).toContain('flood-2@1');
    } finally {
      await close();
    }
  });

  it('lets a doorbell in anyway once it has waited long enough to be told, to be put back with a notice', async () => {
    const { doorbell, lines, limits, waiting, close } = await fairDoorbell({ toldMs: 300 });
    try {
      await limits.publishTable(new Map([['flood', 1]]));
      expect(await limits.take('flood', 'flood-9', MINUTE)).toMatchObject({ taken: true });
      await doorbell.ring('flood-0', 'flood-0', 1);
      expect(await lines.length(place)).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 400));
      await doorbell.moveLine('flood-0');
      expect(await waiting()).toEqual(['flood-0@1']);
      // It holds no slot: its turn finds the route at its limit.
      expect(await limits.take('flood', 'flood-0', MINUTE)).toMatchObject({ taken: false });
    } finally {
      await close();
    }
  });
});

describe('weighted fair dispatch', () => {
  it("serves a quiet route's thread among a flooding route's first, not after its backlog", async () => {
    const store = Store.open({
      url: f.redisHandle.url,
      connection: { kind: 'patient' },
      queue: { prefix: uniquePrefix('fair') },
    });
    const order: string[] = [];
    const runner = store.runner({
      sweep: false,
      concurrency: 1,
      handler: async (batch) => {
        order.push(batch.lease.thread);
        await new Promise((resolve) => setTimeout(resolve, 20));
        return { reply: '', stopReason: 'end_turn' };
      },
      replies: noReplies,
    });
    const route = (name: string) => JSON.stringify({ route: name, profile: {} });
    try {
      const threads = Array.from({ length: 30 }, (_, i) => `gateway:C:flood-${i}`);
      for (const thread of threads) await store.routes.note(thread, route('flood'));
      await store.routes.note('gateway:C:quiet', route('quiet'));
      // The whole flood is rung before the quiet thread's one message, and before any worker runs.
      for (const thread of threads) await store.queue.intake.enqueue(thread, { id: 'm1', body: 'x' });
      await store.queue.intake.enqueue('gateway:C:quiet', { id: 'm1', body: 'x' });
      // What tributary_doorbells_lined reads: the flood's doorbells beyond its two in the queue.
      expect((await store.fleetStats()).lined).toBe(threads.length - LINE_QUANTUM);
      await runner.start();
      await waitFor(() => order.length === threads.length + 1, {
        what: 'every thread served',
        timeoutMs: 30_000,
      });

      // First in, first out would serve it 31st: its route's line let it in behind the flood's quantum.
      expect(order.indexOf('gateway:C:quiet')).toBeLessThanOrEqual(LINE_QUANTUM);
      expect(order.filter((thread) => thread !== 'gateway:C:quiet')).toEqual(threads);
    } finally {
      await runner.close();
      await store.close();
    }
  });

  it('says at warn once and counts a line that did not move up, serves its thread all the same, and says when it moves again', async () => {
    const prefix = uniquePrefix('stalled');
    const store = Store.open({ url: f.redisHandle.url, connection: { kind: 'patient' }, queue: { prefix } });
    const said: string[] = [];
    const logger: LogSink = {
      ...silentLogger,
      warn: (_fields, message) => said.push(`warn: ${message}`),
      info: (_fields, message) => said.push(`info: ${message}`),
    };
    let stalls = 0;
    const served: string[] = [];
    const runner = store.runner({
      sweep: false,
      concurrency: 1,
      logger,
      events: { lineStalled: () => stalls++ },
      handler: async (batch) => {
        served.push(batch.lease.thread);
        return { reply: '', stopReason: 'end_turn' };
      },
      replies: noReplies,
    });
    const stalled = "a route's line did not move up; the sweeper moves it";
    // The default route's line holds a key of the wrong type: every move of that line fails.
    const epochs = `${prefix}:{route-lines}:epochs:${DEFAULT_POOL}:default`;
    try {
      await store.queue.intake.enqueue('first', { id: 'm1', body: 'x' });
      await f.redis.set(epochs, 'broken');
      await runner.start();
      await waitFor(() => served.includes('first'), { what: 'the first thread served' });
      await waitFor(() => stalls === 1, { what: 'the stall counted' });
      expect(said.filter((line) => line.includes(stalled))).toEqual([`warn: ${stalled}`]);

      await f.redis.del(epochs);
      await store.queue.intake.enqueue('second', { id: 'm1', body: 'x' });
      await waitFor(() => said.includes(`info: ${stalled}: recovered`), { what: 'the recovery said' });
      expect(served).toEqual(['first', 'second']);
      expect(stalls).toBe(1);
    } finally {
      await runner.close();
      await store.close();
    }
  });
});
