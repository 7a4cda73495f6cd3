import { deletePrefix, uniquePrefix } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConnection, type RedisClient } from '../src/connections.js';
import { FleetPace } from '../src/stores/fleet-pace.js';
import { type QueueFixture, queueFixture } from './fixture.js';

let f: QueueFixture;
let other: RedisClient;
const prefix = uniquePrefix('pace');
beforeAll(async () => {
  f = await queueFixture();
  other = openConnection(f.redisHandle.url, { kind: 'patient' });
});
afterAll(async () => {
  await deletePrefix(f.redis, prefix);
  other.disconnect();
  await f.close();
});

/** One write a second to a channel, three at once after a quiet spell. */
const channel = (id: string) => [{ key: `slack:channel:${id}`, perMinute: 60, burst: 3 }];

describe('FleetPace, one budget per place across the fleet', () => {
  it('lets a burst go at once, then serves writers of two workers one slot apart, in the order asked', async () => {
    // Each write's wait by the order it was asked in: the two connections answer in their own time,
    // so the order the waits end in says nothing.
    const waits: string[] = [];
    const writes: Promise<number | undefined>[] = [];
    for (const [i, worker] of ['a', 'b', 'a', 'b', 'a'].entries()) {
      const pace = new FleetPace(worker === 'a' ? f.redis : other, prefix, (_, ms) => {
        waits[i] = `${worker} ${Math.round(ms / 500) * 500}`;
      });
      writes.push(pace.take('slack', channel('C1'), false));
      // Asked one after another: each reservation is made before the next is asked for.
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(await Promise.all(writes)).toEqual([undefined, undefined, undefined, undefined, undefined]);
    expect(waits).toEqual(['a 0', 'b 0', 'a 0', 'b 1000', 'a 2000']);
  });

  it('gives a draft a slot only when one is free now, and reserves nothing for a refused one', async () => {
    const pace = new FleetPace(f.redis, prefix);
    const waits: number[] = [];
    const watched = new FleetPace(f.redis, prefix, (_, ms) => waits.push(ms));
    expect(await pace.take('slack', channel('C2'), true)).toBeUndefined();
    await pace.take('slack', channel('C2'), false);
    await pace.take('slack', channel('C2'), false);
    // The burst is spent: a draft is told how long until the next slot, and takes none.
    const busy = await pace.take('slack', channel('C2'), true);
    expect(busy).toBeGreaterThan(500);
    expect(busy).toBeLessThanOrEqual(1_000);
    const start = Date.now();
    await watched.take('slack', channel('C2'), false);
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeLessThanOrEqual(busy!);
    expect(Date.now() - start).toBeGreaterThanOrEqual(waits[0]! - 5);
  });

  it('waits for the latest of its limits, and a channel’s budget is its own', async () => {
    const waits: number[] = [];
    const pace = new FleetPace(f.redis, prefix, (_, ms) => waits.push(ms));
    const bot = { key: 'telegram:bot:b1', perMinute: 60, burst: 1 };
    await pace.take('telegram', [{ key: 'telegram:chat:1', perMinute: 60, burst: 3 }, bot], false);
    // Another chat has its whole burst, but the bot's next slot is a second away.
    await pace.take('telegram', [{ key: 'telegram:chat:2', perMinute: 60, burst: 3 }, bot], false);
    expect(waits[0]).toBe(0);
    expect(waits[1]).toBeGreaterThan(900);
  });
});
