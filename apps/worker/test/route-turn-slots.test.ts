import { createMetrics } from '@tributary/observability';
import { Store } from '@tributary/queue';
import { type RedisHandle, startRedis, uniquePrefix, waitFor } from '@tributary/testkit';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RouteAtLimit, RouteTurnSlots, type Wake } from '../src/turns/route-turn-slots.js';

let server: RedisHandle;
let store: Store;
const log = pino({ level: 'silent' });
beforeAll(async () => {
  server = await startRedis();
  store = Store.open({
    url: server.url,
    connection: { kind: 'patient' },
    queue: { prefix: uniquePrefix('slots') },
  });
});
afterAll(async () => {
  await store.close();
  await server.stop();
});

/** Slots whose wakes answer as `answers` says, recording each thread rung and each line moved. */
function slotsWaking(answers: Record<string, Wake[]>, renewMs?: number) {
  const rung: string[] = [];
  const moved: string[] = [];
  const slots = new RouteTurnSlots(
    store.turnLimits,
    {
      async wake(thread) {
        rung.push(thread);
        return answers[thread]?.shift() ?? 'woken';
      },
      async moveLine(thread) {
        moved.push(thread);
      },
    },
    createMetrics(),
    renewMs,
  );
  return { slots, rung, moved };
}

describe("a route's turn slots, as a worker takes and frees them", () => {
  it('passes over a thread of the line with nothing waiting, and holds the slot for the next', async () => {
    await store.turnLimits.publishTable(new Map([['one', 1]]));
    const { slots, rung, moved } = slotsWaking({ 'one-b': ['gone'] });
    expect(await slots.take('one', 'one-a', log)).toBe(true);
    for (const thread of ['one-b', 'one-c']) {
      await expect(slots.take('one', thread, log)).rejects.toBeInstanceOf(RouteAtLimit);
    }
    await slots.free('one', 'one-a', log);
    expect(rung).toEqual(['one-b', 'one-c']);
    // A thread put back was woken for the slot: the route's line waits.
    expect(moved).toEqual([]);
    // Held for the thread woken: one that never waited does not take it first.
    await expect(slots.take('one', 'one-d', log)).rejects.toBeInstanceOf(RouteAtLimit);
    expect(await slots.take('one', 'one-c', log)).toBe(true);
    await slots.free('one', 'one-c', log);
  });

  it('passes over every thread of the line with nothing waiting, then moves the line', async () => {
    await store.turnLimits.publishTable(new Map([['emptied', 1]]));
    const gone = Array.from({ length: 8 }, (_, i) => `emptied-${i}`);
    const { slots, rung, moved } = slotsWaking(Object.fromEntries(gone.map((t) => [t, ['gone']])));
    expect(await slots.take('emptied', 'emptied-a', log)).toBe(true);
    for (const thread of gone) {
      await expect(slots.take('emptied', thread, log)).rejects.toBeInstanceOf(RouteAtLimit);
    }
    await slots.free('emptied', 'emptied-a', log);
    expect(rung).toEqual(gone);
    expect(moved).toEqual(['emptied-a']);
    // Held for none of those passed over: the next turn takes it.
    expect(await slots.take('emptied', 'emptied-z', log)).toBe(true);
    await slots.free('emptied', 'emptied-z', log);
  });

  it("moves the route's line when no thread put back waits for the slot freed", async () => {
    await store.turnLimits.publishTable(new Map([['lined', 1]]));
    const route = JSON.stringify({ route: 'lined', profile: {} });
    for (const thread of ['lined-a', 'lined-b']) await store.routes.note(thread, route);
    const slots = new RouteTurnSlots(store.turnLimits, store, createMetrics());
    expect(await slots.take('lined', 'lined-a', log)).toBe(true);
    // lined-b's message arrives while the route's one turn runs: it waits in the route's line.
    await store.queue.intake.enqueue('lined-b', { id: 'm1', body: 'x' });
    expect((await store.fleetStats()).lined).toBe(1);

    await slots.free('lined', 'lined-a', log);
    expect((await store.fleetStats()).lined).toBe(0);
    // Let in with the slot held for it: a thread that never waited does not take it first.
    await expect(slots.take('lined', 'lined-c', log)).rejects.toBeInstanceOf(RouteAtLimit);
    expect(await slots.take('lined', 'lined-b', log)).toBe(true);
    await slots.free('lined', 'lined-b', log);
  });

  it('asks again shortly for a thread woken while its own put-back was under way', async () => {
    await store.turnLimits.publishTable(new Map([['two', 1]]));
    const { slots, rung } = slotsWaking({ 'two-b': ['not-yet', 'woken'] });
    expect(await slots.take('two', 'two-a', log)).toBe(true);
    await expect(slots.take('two', 'two-b', log)).rejects.toThrow(/at most 1 turns at once/);
    await slots.free('two', 'two-a', log);
    await waitFor(() => rung.length === 2, { what: 'the second wake' });
    expect(rung).toEqual(['two-b', 'two-b']);
    expect(await slots.take('two', 'two-b', log)).toBe(true);
  });

  it('stops renewing the slot of a turn whose lease went elsewhere, so the next owner’s free holds', async () => {
    await store.turnLimits.publishTable(new Map([['moved', 1]]));
    const { slots } = slotsWaking({}, 30);
    expect(await slots.take('moved', 'moved-a', log)).toBe(true);
    slots.leave('moved-a');
    // The next owner ran the thread's turn on the same slot and freed it as it ended.
    await store.turnLimits.free('moved', 'moved-a', 60_000);
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(await slots.take('moved', 'moved-b', log)).toBe(true);
    await slots.free('moved', 'moved-b', log);
  });

  it('holds nothing for a route without a limit', async () => {
    const { slots, rung } = slotsWaking({});
    expect(await slots.take('unlimited', 'x', log)).toBe(false);
    expect(rung).toEqual([]);
  });
});
