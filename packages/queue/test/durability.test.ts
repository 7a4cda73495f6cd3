import { startRedis } from '@tributary/testkit';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { queueConfig } from '../src/queue-config.js';
import { threadQueue } from '../src/threads/thread-queue.js';
import { BullDoorbell } from '../src/wake/doorbell.js';
import { claimNow } from './fixture.js';

describe('durability across a Redis crash', () => {
  it('keeps every acknowledged message through a SIGKILL of Redis (AOF replay); scripts reload after restart', async () => {
    const server = await startRedis({ private: true, appendfsync: 'always' });
    const redis = new Redis(server.url, { maxRetriesPerRequest: null });
    // Connection errors while the server is down are expected; commands wait for the reconnect.
    redis.on('error', () => {});
    const config = queueConfig({ prefix: 'dur', buckets: 2, maxBatchMessages: 500 });
    const doorbell = new BullDoorbell(redis, config);
    const queue = threadQueue(redis, config, doorbell);
    try {
      const acknowledged: string[] = [];
      for (let i = 0; i < 200; i++) {
        await queue.intake.enqueue('th', { id: `m${i}`, body: `message ${i}` });
        acknowledged.push(`m${i}`);
      }
      await server.kill('SIGKILL');
      await server.restart();

      // A restarted Redis has an empty script cache: defineCommand falls back from EVALSHA to EVAL.
      expect((await queue.intake.enqueue('th', { id: 'm199', body: 'retry of the last one' })).outcome).toBe(
        'duplicate',
      );
      const claim = await claimNow(queue, 'th');
      if (claim.kind !== 'batch') throw new Error(`expected a batch, got ${claim.kind}`);
      expect(claim.batch.messages.map((m) => m.id)).toEqual(acknowledged);
    } finally {
      await doorbell.close();
      redis.disconnect();
      await server.stop();
    }
  });

  it('wipe brings the server back empty', async () => {
    const server = await startRedis({ private: true });
    const redis = new Redis(server.url, { maxRetriesPerRequest: null });
    redis.on('error', () => {});
    try {
      await redis.set('k', 'v');
      await server.wipe();
      await server.restart();
      expect(await redis.get('k')).toBeNull();
    } finally {
      redis.disconnect();
      await server.stop();
    }
  });
});
