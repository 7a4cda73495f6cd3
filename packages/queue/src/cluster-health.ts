import { Cluster } from 'ioredis';
import { dataNodes, type RedisClient } from './connections.js';
import { RedisTopologyError } from './errors.js';

/**
 * Checks that every key can be served: in a Cluster, that the client knows its primaries and each
 * reports `cluster_state:ok` (every slot has a primary); on a single-node address, that the server is
 * not one node of a Cluster (it would answer MOVED for most keys).
 */
export async function checkTopology(redis: RedisClient): Promise<void> {
  if (!(redis instanceof Cluster)) {
    if (/^cluster_enabled:1\b/m.test(await redis.info('cluster'))) {
      throw new RedisTopologyError(
        'the Redis address names one node of a Redis Cluster; give the Cluster as ' +
          'redis-cluster://host:port,host:port (any reachable nodes)',
      );
    }
    return;
  }
  const primaries = await dataNodes(redis);
  if (primaries.length === 0) throw new RedisTopologyError('Redis Cluster: no primary is known yet');
  for (const node of primaries) {
    const info = String(await node.cluster('INFO'));
    const state = /^cluster_state:(\w+)/m.exec(info)?.[1] ?? 'unknown';
    if (state !== 'ok') {
      throw new RedisTopologyError(
        `Redis Cluster node ${node.options.host}:${node.options.port} reports cluster_state:${state}: ` +
          'some slots have no reachable primary',
      );
    }
  }
}
