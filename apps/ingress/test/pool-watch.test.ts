import type { PlatformClient } from '@tributary/platforms';
import { Store } from '@tributary/queue';
import { type RedisHandle, startRedis, uniquePrefix } from '@tributary/testkit';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PoolWatch } from '../src/pool-watch.js';

let server: RedisHandle;
let store: Store;
beforeAll(async () => {
  server = await startRedis();
  store = Store.open({
    url: server.url,
    connection: { kind: 'patient' },
    queue: { prefix: uniquePrefix('pools') },
  });
});
afterAll(async () => {
  await store.close();
  await server.stop();
});

const ref = { platform: 'telegram', channelId: '-1', messageId: '7' };

/** A watch whose failures are collected: warn lines, counted failures, what was sent. */
function watch(options: { list?: () => Promise<never>; send?: () => Promise<never> }) {
  const warnings: string[] = [];
  const failures: string[] = [];
  const sent: string[] = [];
  const logger = pino(
    { level: 'warn' },
    { write: (line: string) => void warnings.push(JSON.parse(line).msg) },
  );
  const client = {
    send: options.send ?? (async (_ref: unknown, text: string) => void sent.push(text)),
  } as unknown as PlatformClient;
  const pools = new PoolWatch({
    workers: { list: options.list ?? (async () => []) },
    routes: store.routes,
    clients: new Map([['telegram', client]]),
    onUnserved: () => {},
    onFailure: (what) => failures.push(what),
    logger,
  });
  return { pools, warnings, failures, sent };
}

describe('a pool without workers', () => {
  it('is told when the worker reports cannot be read: a warn line and a counted failure', async () => {
    const { pools, warnings, failures, sent } = watch({
      list: async () => {
        throw new Error('Redis down');
      },
    });
    await pools.accepted('telegram:-1:a', 'gpu', ref);
    expect(failures).toEqual(['check']);
    expect(warnings).toEqual(["the pool's workers were not checked for this message"]);
    expect(sent).toEqual([]);
  });

  it('tells the thread again at its next message when the notice did not go out', async () => {
    const failing = watch({
      send: async () => {
        throw new Error('platform answered 503');
      },
    });
    await failing.pools.accepted('telegram:-1:b', 'gpu', ref);
    expect(failing.failures).toEqual(['notice']);
    expect(failing.warnings).toContain('the thread was not told that its pool has no worker');

    const working = watch({});
    await working.pools.accepted('telegram:-1:b', 'gpu', ref);
    await working.pools.accepted('telegram:-1:b', 'gpu', ref);
    expect(working.sent).toHaveLength(1);
    expect(working.sent[0]).toContain('pool "gpu"');
  });
});
