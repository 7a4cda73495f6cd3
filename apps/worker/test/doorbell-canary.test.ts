import { BullDoorbell, queueConfig } from '@tributary/queue';
import { deletePrefix, type RedisHandle, startRedis, uniquePrefix, waitFor } from '@tributary/testkit';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DoorbellCanary } from '../src/health/doorbell-canary.js';
import { message, startHarness, type WorkerHarness } from './worker-fixture.js';

let server: RedisHandle;
let redis: Redis;
const prefix = uniquePrefix('canary');
beforeAll(async () => {
  server = await startRedis();
  redis = new Redis(server.url);
});
afterAll(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
  await server.stop();
});

describe('DoorbellCanary', () => {
  it('adds canary jobs to the shared doorbell queue every period', async () => {
    const doorbell = new BullDoorbell(redis, queueConfig({ prefix }));
    const canary = new DoorbellCanary(doorbell, 'w1', pino({ level: 'silent' }), {
      periodMs: 20,
      windowMs: 10_000,
    });
    canary.start(() => true);
    await waitFor(
      async () =>
        (await doorbell.queues[0]!.getJobs(['waiting'])).filter((j) => j.name === 'canary').length >= 2,
      {
        what: 'two canary jobs',
      },
    );
    canary.stop();
    await doorbell.close();
  });

  it('reports an idle worker that took no job within the window as not consuming', async () => {
    const doorbell = new BullDoorbell(redis, queueConfig({ prefix }));
    let free = true;
    const canary = new DoorbellCanary(doorbell, 'w2', pino({ level: 'silent' }), {
      periodMs: 60_000,
      windowMs: 50,
    });
    canary.start(() => free);
    await waitFor(() => !canary.consuming(), { what: 'the window to pass' });
    free = false;
    expect(canary.consuming()).toBe(true); // busy workers take no jobs by design
    free = true;
    canary.taken(0);
    expect(canary.consuming()).toBe(true);
    canary.stop();
    await doorbell.close();
  });

  it('reports a worker whose consumer of one doorbell queue took nothing as not consuming', async () => {
    const doorbell = new BullDoorbell(redis, queueConfig({ prefix, doorbellQueues: 3 }));
    const canary = new DoorbellCanary(doorbell, 'w3', pino({ level: 'silent' }), {
      periodMs: 60_000,
      windowMs: 50,
    });
    canary.start(() => true);
    await waitFor(() => !canary.consuming(), { what: 'the window to pass' });
    canary.taken(0);
    canary.taken(2);
    expect(canary.consuming()).toBe(false);
    canary.taken(1);
    expect(canary.consuming()).toBe(true);
    canary.stop();
    await doorbell.close();
  });
});

describe('worker readiness', () => {
  let h: WorkerHarness;
  beforeAll(async () => {
    h = await startHarness({}, {}, { canary: { periodMs: 50, windowMs: 1_000 } });
  });
  afterAll(() => h.close());

  it('is ready while it consumes its canaries and answers turns', async () => {
    await h.send('th', message('hello'));
    await waitFor(() => h.sent.length === 1, { what: 'a reply' });
    // A sleep on purpose: the readiness window (1 s) must pass since the turn's doorbell, the last job
    // that was not a canary, so that only canaries consumed since then can keep the worker ready.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    const ready = await fetch(`${h.worker.healthUrl}/readyz`);
    expect(ready.status).toBe(200);
    const metrics = await (await fetch(`${h.worker.healthUrl}/metrics`)).text();
    expect(metrics).toMatch(/^tributary_doorbell_consumer_up 1$/m);
    expect((await fetch(`${h.worker.healthUrl}/livez`)).status).toBe(200);
  });
});
