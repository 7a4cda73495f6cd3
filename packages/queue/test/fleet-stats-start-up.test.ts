import { startRedis } from '@tributary/testkit';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Store } from '../src/store.js';

// One ingress reported NaN for the fleet gauges for its whole life: BullMQ's queue sends INFO once,
// right after connecting, and kept that one failure for good, so every later job count (part of the
// fleet reading) failed too while the enqueue path, which needs no BullMQ, worked. Here the start-up
// INFO is refused (an ACL without it, as some managed Redis services have) and then allowed: the
// reading must recover.
let redis: Awaited<ReturnType<typeof startRedis>>;
let admin: Redis;

beforeAll(async () => {
  redis = await startRedis({ private: true });
  admin = new Redis(redis.url);
});

afterAll(async () => {
  admin.disconnect();
  await redis.stop();
});

it('reads the fleet once Redis answers, whatever failed while the store was connecting', async () => {
  await admin.call('ACL', 'SETUSER', 'ingress', 'on', '>secret', '~*', '&*', '+@all', '-info');
  const url = new URL(redis.url);
  url.username = 'ingress';
  url.password = 'secret';
  const store = Store.open({ url: url.href, connection: { kind: 'fail-fast', timeoutMs: 1_000 } });
  try {
    await store.whenReady(5_000);
    // Whatever BullMQ does on connecting has happened before INFO is allowed.
    await Promise.allSettled(store.doorbell.queues().map((queue) => queue.waitUntilReady()));
    await admin.call('ACL', 'SETUSER', 'ingress', '+info');

    await expect(store.fleetStats()).resolves.toMatchObject({ runnable: 0, running: 0, backlog: 0 });
  } finally {
    await store.close();
  }
});
