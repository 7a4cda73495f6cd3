import { type RedisHandle, startRedis, uniquePrefix } from '@tributary/testkit';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../src/store.js';

let server: RedisHandle;
let store: Store;
let redis: Redis;
const prefix = uniquePrefix('routes');
beforeAll(async () => {
  server = await startRedis();
  store = Store.open({ url: server.url, connection: { kind: 'patient' }, queue: { prefix } });
  redis = new Redis(server.url);
});
afterAll(async () => {
  redis.disconnect();
  await store.close();
  await server.stop();
});

describe("a thread's route record", () => {
  it('keeps the first route it was given, and lives on with each message noted', async () => {
    const thread = 'slack:C1:1700000000.000100';
    expect(await store.routes.of(thread)).toBeUndefined();
    await store.routes.note(thread, '{"route":"first","profile":{}}');
    await store.routes.note(thread, '{"route":"second","profile":{}}');
    expect(await store.routes.of(thread)).toBe('{"route":"first","profile":{}}');
    const key = `${prefix}:route:{${thread}}`;
    // Near its end, a new message renews it for the whole idle time of a thread.
    await redis.pexpire(key, 1_000);
    await store.routes.note(thread, '{"route":"second","profile":{}}');
    expect(await redis.pttl(key)).toBeGreaterThan(store.config.idleTtlMs - 60_000);
    expect(await store.routes.of(thread)).toBe('{"route":"first","profile":{}}');
  });
});
