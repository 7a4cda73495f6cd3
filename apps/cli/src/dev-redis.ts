import { join } from 'node:path';
import { isRedisCluster } from '@tributary/config';
import { hasRedisServer, redisAnswers, startRedis } from '@tributary/testkit';

export interface DevRedis {
  url: string;
  /** Set when the dev runner started its own redis-server. */
  started: boolean;
  stop(): Promise<void>;
}

/**
 * REDIS_URL (default the local Redis) when it answers; otherwise a private redis-server with AOF under
 * the project's `.tributary/redis`, so queued messages survive a restart of the dev stack. A Redis
 * Cluster is always taken as given: the stack's readiness reports it if it is not healthy.
 */
export async function devRedis(url: string, dataDir: string): Promise<DevRedis> {
  if (isRedisCluster(url)) return { url, started: false, stop: async () => {} };
  if (await redisAnswers(url)) return { url, started: false, stop: async () => {} };
  if (!hasRedisServer()) {
    throw new Error(
      `no Redis answers at ${url} and no redis-server is installed. Install Redis ≥ 7 ` +
        '(Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis) or set REDIS_URL.',
    );
  }
  const server = await startRedis({ private: true, dataDir: join(dataDir, 'redis'), ownProcessGroup: true });
  return { url: server.url, started: true, stop: () => server.stop() };
}
