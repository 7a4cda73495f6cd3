import { type RedisHandle, startRedis, uniquePrefix } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../src/store.js';

let server: RedisHandle;
let store: Store;
beforeAll(async () => {
  server = await startRedis();
  store = Store.open({
    url: server.url,
    connection: { kind: 'patient' },
    queue: { prefix: uniquePrefix('limits') },
  });
});
afterAll(async () => {
  await store.close();
  await server.stop();
});

const MINUTE = 60_000;

describe("a route's turn limit across the fleet", () => {
  it('hands out its slots, lines up the threads that find none, and frees a slot to the oldest', async () => {
    const limits = store.turnLimits;
    await limits.publishTable(new Map([['busy', 2]]));
    expect(await limits.limits()).toEqual({ busy: 2 });
    expect(await limits.take('busy', 'a', MINUTE)).toEqual({ taken: true, limit: 2 });
    expect(await limits.take('busy', 'b', MINUTE)).toEqual({ taken: true, limit: 2 });
    // A thread that holds a slot keeps it when it asks again (its next batch).
    expect(await limits.take('busy', 'b', MINUTE)).toEqual({ taken: true, limit: 2 });
    expect(await limits.take('busy', 'c', MINUTE)).toEqual({ taken: false, limit: 2, waiting: 1 });
    expect(await limits.take('busy', 'd', MINUTE)).toEqual({ taken: false, limit: 2, waiting: 2 });
    // Asking again keeps a thread's place in the line.
    expect(await limits.take('busy', 'c', MINUTE)).toEqual({ taken: false, limit: 2, waiting: 2 });

    // A freed slot is held for the thread that waited longest: nobody else takes it first.
    expect(await limits.free('busy', 'a', MINUTE)).toBe('c');
    expect(await limits.take('busy', 'e', MINUTE)).toEqual({ taken: false, limit: 2, waiting: 2 });
    expect(await limits.take('busy', 'c', MINUTE)).toEqual({ taken: true, limit: 2 });
    expect(await limits.free('busy', 'b', MINUTE)).toBe('d');
    // A thread of the line passed over (nothing waiting) gives its held slot to the next one.
    expect(await limits.free('busy', 'd', MINUTE)).toBe('e');
    expect(await limits.free('busy', 'c', MINUTE)).toBeUndefined();
    expect(await limits.take('busy', 'f', MINUTE)).toEqual({ taken: true, limit: 2 });
  });

  it('keeps nothing for a route without a limit, and a new table replaces the old one whole', async () => {
    const limits = store.turnLimits;
    await limits.publishTable(new Map([['busy', 1]]));
    for (const thread of ['x', 'y', 'z']) {
      expect(await limits.take('quiet', thread, MINUTE)).toEqual({ taken: true, limit: 0 });
    }
    expect(await limits.free('quiet', 'x', MINUTE)).toBeUndefined();
    await limits.publishTable(new Map([['other', 3]]));
    expect(await limits.limits()).toEqual({ other: 3 });
    await limits.publishTable(new Map());
    expect(await limits.limits()).toEqual({});
  });

  it('gives back the slot of a worker that died once it lapses', async () => {
    const limits = store.turnLimits;
    await limits.publishTable(new Map([['lapse', 1]]));
    expect(await limits.take('lapse', 'dead-worker-thread', 200)).toEqual({ taken: true, limit: 1 });
    expect(await limits.take('lapse', 'next', MINUTE)).toMatchObject({ taken: false });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await limits.take('lapse', 'next', MINUTE)).toEqual({ taken: true, limit: 1 });
    expect(await limits.take('lapse', 'absent', MINUTE)).toMatchObject({ taken: false });
    expect(await limits.free('lapse', 'next', 200)).toBe('absent');
    expect(await limits.take('lapse', 'late', MINUTE)).toMatchObject({ taken: false });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await limits.take('lapse', 'late', MINUTE)).toEqual({ taken: true, limit: 1 });
  });
});
