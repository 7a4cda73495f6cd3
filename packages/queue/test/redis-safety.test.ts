import { startRedis } from '@tributary/testkit';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { UnsafeRedisError } from '../src/errors.js';
import { checkRedisSafety } from '../src/redis-safety.js';

describe('redis safety check', () => {
  it('accepts noeviction, refuses or warns about an evicting policy', async () => {
    const server = await startRedis({ private: true });
    const redis = new Redis(server.url);
    try {
      expect(await checkRedisSafety(redis, 'refuse')).toEqual({
        maxmemoryPolicy: 'noeviction',
        aofEnabled: true,
        appendfsync: 'everysec',
      });
      await redis.config('SET', 'maxmemory-policy', 'allkeys-lru');
      await expect(checkRedisSafety(redis, 'refuse')).rejects.toBeInstanceOf(UnsafeRedisError);
      const logged: object[] = [];
      const logger = { debug() {}, info() {}, warn() {}, error: (obj: object) => logged.push(obj) };
      const report = await checkRedisSafety(redis, 'warn', logger);
      expect(report.maxmemoryPolicy).toBe('allkeys-lru');
      expect(logged).toEqual([expect.objectContaining({ maxmemoryPolicy: 'allkeys-lru' })]);
    } finally {
      redis.disconnect();
      await server.stop();
    }
  });
});
