import { GenericContainer } from 'testcontainers';
import type { RedisHandle } from './redis-handle.js';

/** Fallback for machines without redis-server: a throwaway container, when a Docker engine answers. */
export async function startContainerRedis(): Promise<RedisHandle> {
  let container: Awaited<ReturnType<GenericContainer['start']>>;
  try {
    container = await new GenericContainer('redis:7')
      .withExposedPorts(6379)
      .withCommand(['redis-server', '--appendonly', 'yes', '--maxmemory-policy', 'noeviction'])
      .start();
  } catch (error) {
    throw new Error(
      `no REDIS_URL, no redis-server on PATH and no Docker engine (${String(error)}); ` +
        'install Redis (Debian: apt-get install redis-server) or set REDIS_URL',
    );
  }
  const unsupported = async (): Promise<never> => {
    // A restarted container may come back on another mapped port, which would silently change `url`.
    throw new Error(
      'kill/restart/wipe need a local redis-server binary; the container fallback cannot do them',
    );
  };
  return {
    url: `redis://${container.getHost()}:${container.getMappedPort(6379)}`,
    owned: false,
    kill: unsupported,
    restart: unsupported,
    wipe: unsupported,
    stop: async () => {
      await container.stop();
    },
  };
}
