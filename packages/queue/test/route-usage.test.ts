import { type RedisHandle, startRedis, uniquePrefix } from '@tributary/testkit';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../src/store.js';
import { claimNow, done, type QueueFixture, queueFixture } from './fixture.js';

let server: RedisHandle;
let store: Store;
let redis: Redis;
let f: QueueFixture;
const prefix = uniquePrefix('usage');
beforeAll(async () => {
  server = await startRedis();
  store = Store.open({ url: server.url, connection: { kind: 'patient' }, queue: { prefix } });
  redis = new Redis(server.url);
  f = await queueFixture();
});
afterAll(async () => {
  redis.disconnect();
  await store.close();
  await server.stop();
  await f.close();
});

const NOON = Date.UTC(2026, 11, 3, 12);
const DAY = 24 * 60 * 60 * 1000;

describe("a route's usage", () => {
  it('adds up per route and UTC day, cost by currency, and is kept five weeks', async () => {
    const { usage } = store;
    await usage.add('support', { inputTokens: 100, outputTokens: 20, totalTokens: 120 }, NOON);
    await usage.add(
      'support',
      { inputTokens: 50, outputTokens: 5, totalTokens: 55, cost: { amount: 0.25, currency: 'USD' } },
      NOON + 60_000,
    );
    await usage.add('frontend', { inputTokens: 1, outputTokens: 1, totalTokens: 2 }, NOON);
    await usage.add('support', { inputTokens: 7, outputTokens: 0, totalTokens: 7 }, NOON - DAY);

    expect(await usage.spentToday('support', NOON)).toBe(175);
    expect(await usage.spentToday('support', NOON + DAY)).toBe(0);
    expect(await usage.days(2, NOON)).toEqual([
      {
        day: '2026-12-03',
        route: 'frontend',
        turns: 1,
        inputTokens: 1,
        outputTokens: 1,
        totalTokens: 2,
        cost: {},
      },
      {
        day: '2026-12-03',
        route: 'support',
        turns: 2,
        inputTokens: 150,
        outputTokens: 25,
        totalTokens: 175,
        cost: { USD: 0.25 },
      },
      {
        day: '2026-12-02',
        route: 'support',
        turns: 1,
        inputTokens: 7,
        outputTokens: 0,
        totalTokens: 7,
        cost: {},
      },
    ]);
    const ttl = await redis.pttl(`${prefix}:usage:2026-12-03`);
    expect(ttl).toBeGreaterThan(34 * DAY);
    expect(ttl).toBeLessThanOrEqual(35 * DAY);
  });

  it("takes an operator's budget over the route table's, and the table's back once it is cleared", async () => {
    const { usage } = store;
    await usage.publishTable(
      new Map([
        ['support', 1000],
        ['frontend', 50],
      ]),
    );
    expect(await usage.budgetOf('support')).toEqual({ tokens: 1000, source: 'file' });
    expect(await usage.budgetOf('nowhere')).toBeUndefined();

    await usage.override('support', 5000);
    expect(await usage.budgetOf('support')).toEqual({ tokens: 5000, source: 'override' });
    // A table published again (every ingress, every reload) leaves the override alone, and drops
    // the routes it no longer budgets.
    await usage.publishTable(new Map([['support', 2000]]));
    expect(await usage.budgets()).toEqual({ support: { tokens: 5000, source: 'override' } });

    await usage.override('support', undefined);
    expect(await usage.budgetOf('support')).toEqual({ tokens: 2000, source: 'file' });
    await usage.publishTable(new Map());
    expect(await usage.budgets()).toEqual({});
  });
});

describe("a batch's record", () => {
  it('keeps what its turn spent', async () => {
    const { queue } = await f.make();
    await queue.intake.enqueue('th', { id: 'm1', body: 'x' });
    const claim = await claimNow(queue, 'th');
    if (claim.kind !== 'batch') throw new Error('no batch');
    const spent = {
      inputTokens: 9,
      outputTokens: 3,
      totalTokens: 12,
      cost: { amount: 0.5, currency: 'USD' },
    };
    await queue.turns.commit(claim.batch.lease, { ...done, usage: spent });
    await queue.intake.enqueue('th', { id: 'm2', body: 'y' });
    const second = await claimNow(queue, 'th');
    if (second.kind !== 'batch') throw new Error('no batch');
    await queue.turns.commit(second.batch.lease, done);

    const [unreported, reported] = await queue.admin.history('th');
    expect(reported?.usage).toEqual(spent);
    expect(unreported).not.toHaveProperty('usage');
  });
});
