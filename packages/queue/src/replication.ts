import { Cluster, type Redis } from 'ioredis';
import { clusterSlot } from './cluster-slot.js';
import type { RedisClient } from './connections.js';
import { RedisTopologyError, ReplicationLagError } from './errors.js';

/**
 * Replicas that must hold a write before it is acknowledged: a fixed count (0: none), or `auto`: one
 * whenever the primary holding the write has a replica online (docs/adr/0035).
 */
export type AckReplicas = number | 'auto';

/** How long a primary's count of online replicas is trusted before it is read again. */
const TOPOLOGY_TTL_MS = 1_000;

/**
 * Confirms acknowledged writes on replicas. With `auto`, the count of the primary's online replicas
 * (INFO replication: a replica still syncing cannot be promoted with the write, so it does not count)
 * is read at most once a second per primary; a primary without one acknowledges at once, as a single
 * Redis does.
 */
export class ReplicaAcknowledgement {
  private readonly online = new Map<string, { readAt: number; count: Promise<number> }>();

  constructor(
    private readonly redis: RedisClient,
    private readonly ackReplicas: AckReplicas,
    private readonly timeoutMs: number,
  ) {}

  /** Resolves once the replicas asked for hold every write this connection sent to `key`'s primary. */
  async confirm(key: string): Promise<void> {
    const wanted =
      this.ackReplicas === 'auto' ? Math.min(1, await this.onlineReplicas(key)) : this.ackReplicas;
    if (wanted > 0) await awaitReplicas(this.redis, key, wanted, this.timeoutMs);
  }

  private onlineReplicas(key: string): Promise<number> {
    const primary = primaryOf(this.redis, key);
    const name = `${primary.options.host}:${primary.options.port}`;
    const known = this.online.get(name);
    const now = performance.now();
    if (known && now - known.readAt < TOPOLOGY_TTL_MS) return known.count;
    const count = primary.info('replication').then(countOnlineReplicas);
    // Not remembered when it failed: the next message asks again.
    count.catch(() => this.online.delete(name));
    this.online.set(name, { readAt: now, count });
    return count;
  }
}

/** Replicas of `INFO replication` whose link is up and synced (`slave<n>:…,state=online,…`). */
export function countOnlineReplicas(info: string): number {
  return info.split('\n').filter((line) => /^slave\d+:.*\bstate=online\b/.test(line)).length;
}

/** The server holding `key`: the one Redis, or the primary of its slot as the Cluster client knows it. */
function primaryOf(redis: RedisClient, key: string): Redis {
  if (!(redis instanceof Cluster)) return redis;
  const [address] = redis.slots[clusterSlot(key)] ?? [];
  const primary = redis
    .nodes('master')
    .find((node) => `${node.options.host}:${node.options.port}` === address);
  if (!primary) throw new RedisTopologyError(`Redis Cluster: no primary is known for the slot of ${key}`);
  return primary;
}

/**
 * Waits until `replicas` replicas of the primary holding `key` have every write this connection sent
 * there (WAIT), so a failover right after cannot lose it. WAIT names no key; sent in a pipeline behind
 * a read of `key`, it reaches that key's primary in a Cluster too.
 */
export async function awaitReplicas(
  redis: RedisClient,
  key: string,
  replicas: number,
  timeoutMs: number,
): Promise<void> {
  const replies = (await redis.pipeline().exists(key).wait(replicas, timeoutMs).exec()) ?? [];
  const [error, confirmed] = replies[1] ?? [new Error('WAIT got no reply'), 0];
  if (error) throw error;
  if ((confirmed as number) < replicas)
    throw new ReplicationLagError(confirmed as number, replicas, timeoutMs);
}
