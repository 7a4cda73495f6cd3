import { Store } from '@tributary/queue';
import { type RedisHandle, startRedis, uniquePrefix } from '@tributary/testkit';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { threadBatching } from '../src/turns/thread-batching.js';

let server: RedisHandle;
let store: Store;
const warnings: string[] = [];
const log = pino(
  { level: 'warn' },
  {
    write: (line: string) => {
      warnings.push((JSON.parse(line) as { msg: string }).msg);
    },
  },
);
beforeAll(async () => {
  server = await startRedis();
  store = Store.open({
    url: server.url,
    connection: { kind: 'patient' },
    queue: { prefix: uniquePrefix('batching') },
  });
});
afterAll(async () => {
  await store.close();
  await server.stop();
});

const config = { processingMode: 'per-thread' as const, processingModes: { slack: 'per-lane' as const } };

describe("a thread's batching", () => {
  it("is its route's where the profile says, else its platform's, and the platform's for a record it cannot read", async () => {
    const batching = threadBatching(config, () => store.routes, log);
    await store.routes.note(
      'slack:C1:a',
      JSON.stringify({ route: 'pairs', profile: { processingMode: 'per-message', maxBatchMessages: 2 } }),
    );
    await store.routes.note(
      'slack:C1:b',
      JSON.stringify({ route: 'tight', profile: { maxBatchTokens: 500 } }),
    );
    await store.routes.note('slack:C1:c', '{"route": "broken", "profile": {"processingMode": 7}}');

    expect(await batching('slack:C1:a')).toEqual({ mode: 'per-message', maxMessages: 2 });
    expect(await batching('slack:C1:b')).toEqual({ mode: 'per-lane', maxTokens: 500 });
    expect(await batching('slack:C1:none')).toEqual({ mode: 'per-lane' });
    expect(await batching('gateway:C1:none')).toEqual({ mode: 'per-thread' });
    expect(warnings).toEqual([]);
    expect(await batching('slack:C1:c')).toEqual({ mode: 'per-lane' });
    expect(warnings).toEqual(["thread's route record unreadable; its platform's batching holds"]);
  });
});
