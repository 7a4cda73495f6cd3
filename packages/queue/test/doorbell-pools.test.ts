import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_POOL, queueConfig } from '../src/queue-config.js';
import { BullDoorbell, doorbellJobId, doorbellPrefix } from '../src/wake/doorbell.js';
import { type QueueFixture, queueFixture } from './fixture.js';

let f: QueueFixture;
beforeAll(async () => {
  f = await queueFixture();
});
afterAll(() => f.close());

describe("a thread's doorbell", () => {
  it("rings its pool's queue and no other, and is found pending there", async () => {
    const config = queueConfig({ prefix: `pools-${Date.now()}`, buckets: 4 });
    const doorbell = new BullDoorbell(f.redis, config, async (thread) => ({
      route: 'default',
      pool: thread.startsWith('gpu') ? 'gpu' : DEFAULT_POOL,
    }));
    try {
      await doorbell.ring('gpu-thread', 'gpu-thread', 3);
      await doorbell.ring('cpu-thread', 'cpu-thread', 5);

      const id = doorbellJobId('gpu-thread', 3);
      expect(await doorbell.queues('gpu')[0]!.getJob(id)).toMatchObject({
        data: { thread: 'gpu-thread', epoch: 3 },
      });
      expect(await doorbell.queues(DEFAULT_POOL)[0]!.getJob(id)).toBeUndefined();
      expect(await doorbell.pending('gpu-thread', 3)).toBe(true);
      expect(await doorbell.pending('cpu-thread', 5)).toBe(true);
      expect((await doorbell.jobCounts('gpu')).waiting).toBe(1);
      expect((await doorbell.jobCounts(DEFAULT_POOL)).waiting).toBe(1);
    } finally {
      await doorbell.close();
    }
  });

  it('keeps the default pool on the keys it had before pools, and gives another pool keys of its own', () => {
    expect(doorbellPrefix('trib', 0, 1)).toBe('trib:{dq}');
    expect(doorbellPrefix('trib', 0, 1, 'gpu')).toBe('trib:{dq.gpu}');
    const tags = [0, 1, 2].map((i) => doorbellPrefix('trib', i, 3, 'gpu'));
    expect(new Set(tags).size).toBe(3);
    for (const tag of tags) expect(tag).toMatch(/^trib:\{dq\.gpu\.\d/);
  });
});
