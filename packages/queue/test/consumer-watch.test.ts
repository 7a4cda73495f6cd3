import { silentLogger } from '@tributary/observability';
import { waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueConfig } from '../src/queue-config.js';
import { ConsumerWatch } from '../src/wake/consumer-watch.js';
import { doorbellQueue } from '../src/wake/doorbell.js';
import { type QueueFixture, queueFixture } from './fixture.js';

let f: QueueFixture;
beforeAll(async () => {
  f = await queueFixture();
});
afterAll(() => f.close());

/** The doorbell queues of a fresh prefix, as a worker's intake holds them. */
async function handles(doorbellQueues = 1) {
  const { queue } = await f.make({ doorbellQueues });
  const config = queueConfig({ ...queue.config });
  return Array.from({ length: doorbellQueues }, (_, i) => doorbellQueue(f.redis, config, i));
}

describe('ConsumerWatch', () => {
  it('adds a canary job to every doorbell queue every period', async () => {
    const queues = await handles(2);
    const watch = new ConsumerWatch(queues, 'w1', () => {}, silentLogger, {
      periodMs: 20,
      stalledAfterMs: 60_000,
      windowMs: 60_000,
    });
    watch.start(() => true);
    for (const queue of queues) {
      await waitFor(
        async () => (await queue.getJobs(['waiting'])).filter((j) => j.name === 'canary').length >= 2,
        {
          what: 'two canary jobs on each queue',
        },
      );
    }
    watch.stop();
    await Promise.all(queues.map((queue) => queue.close()));
  });

  it('reports an idle worker whose consumer of one queue took nothing within the window as not consuming', async () => {
    const queues = await handles(3);
    let free = true;
    const watch = new ConsumerWatch(queues, 'w2', () => {}, silentLogger, {
      periodMs: 60_000,
      stalledAfterMs: 60_000,
      windowMs: 50,
    });
    expect(watch.consuming()).toBe(false); // not taking doorbells yet
    watch.start(() => free);
    await waitFor(() => !watch.consuming(), { what: 'the window to pass' });
    free = false;
    expect(watch.consuming()).toBe(true); // busy workers take no jobs by design
    free = true;
    expect(watch.taken(0, 'ring')).toBe(false);
    expect(watch.taken(2, 'canary')).toBe(true);
    expect(watch.consuming()).toBe(false);
    watch.taken(1, 'ring');
    expect(watch.consuming()).toBe(true);
    watch.stop();
    await Promise.all(queues.map((queue) => queue.close()));
  });

  it('replaces a consumer that leaves jobs waiting while a slot is free, once per stall period', async () => {
    const queues = await handles(2);
    const replaced: number[] = [];
    const watch = new ConsumerWatch(queues, 'w3', (queue) => replaced.push(queue), silentLogger, {
      periodMs: 60_000,
      stalledAfterMs: 100,
      windowMs: 60_000,
    });
    await queues[1]!.add('ring', { thread: 'th', epoch: 1 });
    let free = false;
    watch.start(() => free);
    // Busy: nothing is replaced however long the jobs wait.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(replaced).toEqual([]);
    free = true;
    await waitFor(() => replaced.length >= 1, { what: 'the stalled consumer to be replaced' });
    expect(replaced[0]).toBe(1); // queue 0 has nothing waiting: its quiet consumer is not stalled
    // Taking a job keeps a consumer from being replaced again.
    const before = replaced.length;
    const keep = setInterval(() => watch.taken(1, 'ring'), 20);
    await new Promise((resolve) => setTimeout(resolve, 300));
    clearInterval(keep);
    expect(replaced.length).toBe(before);
    watch.stop();
    await Promise.all(queues.map((queue) => queue.close()));
  });

  it('keeps a consumer that stays stuck not consuming, however often it was replaced', async () => {
    const queues = await handles(1);
    let replaced = 0;
    const watch = new ConsumerWatch(queues, 'w4', () => replaced++, silentLogger, {
      periodMs: 60_000,
      stalledAfterMs: 50,
      windowMs: 300,
    });
    await queues[0]!.add('ring', { thread: 'th', epoch: 1 });
    watch.start(() => true);
    await waitFor(() => replaced >= 2, { what: 'two replacements of the stuck consumer' });
    // A replacement is no proof that jobs are taken: readiness still goes by the last job taken.
    await waitFor(() => !watch.consuming(), { what: 'the readiness window to pass' });
    expect(replaced).toBeGreaterThanOrEqual(2);
    watch.taken(0, 'ring');
    expect(watch.consuming()).toBe(true);
    watch.stop();
    await Promise.all(queues.map((queue) => queue.close()));
  });
});
