import { waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blockingConnection } from '../src/connections.js';
import { DirectDoorbells } from '../src/direct-doorbells.js';
import type { DirectDoorbell, Doorbell } from '../src/doorbells.js';
import { Runner } from '../src/runner.js';
import { SlotGate } from '../src/slot-gate.js';
import { keysOf } from '../src/testing.js';
import { bucketKeys } from '../src/thread-keys.js';
import { threadQueue } from '../src/threads/thread-queue.js';
import { done, noReplies, type QueueFixture, queueFixture, readyDoorbells } from './fixture.js';

let f: QueueFixture;
beforeAll(async () => {
  f = await queueFixture();
});
afterAll(() => f.close());

describe('the buckets’ ready lists', () => {
  it('run a new thread’s first message without ringing the shared queue', async () => {
    const made = await f.make();
    const rings: string[] = [];
    const doorbell: Doorbell = {
      ring: (thread, member, epoch, options) => {
        rings.push(thread);
        return made.doorbell.ring(thread, member, epoch, options);
      },
      pending: (member, epoch) => made.doorbell.pending(member, epoch),
    };
    const queue = threadQueue(f.redis, made.queue.config, doorbell);
    const runner = new Runner({
      queue,
      doorbell,
      connection: f.redis,
      handler: async () => done,
      replies: noReplies,
    });
    await runner.start();
    try {
      const threads = ['t1', 't2', 't3'];
      for (const thread of threads) await queue.intake.enqueue(thread, { id: 'm1', body: 'x' });
      await waitFor(
        async () =>
          (await Promise.all(threads.map((t) => queue.admin.history(t)))).every((h) => h.length === 1),
        { what: 'three first turns' },
      );
      expect(rings).toEqual([]);
      expect(await made.doorbell.jobCounts()).toMatchObject({ waiting: 0, delayed: 0, failed: 0 });
      for (const thread of threads) expect(await readyDoorbells(f.redis, queue, thread)).toEqual([]);
    } finally {
      await runner.close();
    }
  });

  it('put a doorbell popped with no free slot back at the head of its list, and run it once a slot frees', async () => {
    const { queue } = await f.make();
    const gate = new SlotGate(1);
    const ran: DirectDoorbell[] = [];
    const ready = Array.from(
      { length: queue.config.buckets },
      (_, b) => bucketKeys(queue.config.prefix, b).ready,
    );
    const pops = blockingConnection(f.redis);
    const lists = new DirectDoorbells(pops, { ready }, gate, {
      onDoorbell: (doorbell) => {
        ran.push(doorbell);
        gate.release();
      },
      passOn: async () => {},
      othersHaveRoom: async () => false,
      affinityWaitMs: 500,
    });
    lists.start();
    try {
      // The pop is blocked with the slot free; a shared doorbell takes the slot, then one is pushed.
      await waitFor(
        async () => Number((await f.redis.info('clients')).match(/blocked_clients:(\d+)/)?.[1]) > 0,
        {
          what: 'the pop to block',
        },
      );
      expect(gate.tryAcquire()).toBe(true);
      const list = keysOf(queue, 'th').ready;
      await f.redis.rpush(
        list,
        JSON.stringify({ thread: 'th', epoch: 1 }),
        JSON.stringify({ thread: 'th', epoch: 2 }),
      );
      await waitFor(async () => (await f.redis.lrange(list, 0, -1)).length === 2 && ran.length === 0, {
        what: 'the doorbell to go back',
      });
      expect(await readyDoorbells(f.redis, queue, 'th')).toEqual([
        { thread: 'th', epoch: 1 },
        { thread: 'th', epoch: 2 },
      ]);
      expect(await f.redis.pttl(list)).toBeGreaterThan(0);
      gate.release();
      await waitFor(() => ran.length === 2, { what: 'both doorbells to run' });
      expect(ran).toEqual([
        { thread: 'th', epoch: 1 },
        { thread: 'th', epoch: 2 },
      ]);
    } finally {
      await lists.stop();
    }
  });

  it('are served in turn: a bucket with a long line does not starve the next', async () => {
    const { queue } = await f.make({ buckets: 8 });
    const ready = Array.from({ length: 8 }, (_, b) => bucketKeys(queue.config.prefix, b).ready);
    for (const [bucket, thread] of [
      [0, 'a'],
      [1, 'b'],
    ] as const) {
      const items = [1, 2, 3, 4, 5].map((epoch) => JSON.stringify({ thread, epoch }));
      await f.redis.rpush(ready[bucket]!, ...items);
    }
    const gate = new SlotGate(1);
    const ran: string[] = [];
    const lists = new DirectDoorbells(blockingConnection(f.redis), { ready }, gate, {
      onDoorbell: ({ thread }) => {
        ran.push(thread);
        gate.release();
      },
      passOn: async () => {},
      othersHaveRoom: async () => false,
      affinityWaitMs: 500,
    });
    lists.start();
    try {
      await waitFor(() => ran.length === 10, { what: 'every doorbell to run' });
      expect(ran).toEqual(['a', 'b', 'a', 'b', 'a', 'b', 'a', 'b', 'a', 'b']);
    } finally {
      await lists.stop();
    }
  });
});
