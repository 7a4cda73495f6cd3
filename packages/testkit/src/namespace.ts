import { randomBytes } from 'node:crypto';
import { Cluster, type Redis } from 'ioredis';

/** A key prefix no other suite or test uses, so suites sharing one Redis never see each other's keys. */
export function uniquePrefix(label: string): string {
  return `t${randomBytes(4).toString('hex')}-${label.replace(/[^a-z0-9]/gi, '')}`;
}

/**
 * Deletes every key under `prefix` (ours and BullMQ's). In a Cluster each primary holds its own keys,
 * and a multi-key UNLINK must stay within one slot, so each key goes on its own.
 */
export async function deletePrefix(redis: Redis | Cluster, prefix: string): Promise<number> {
  if (!(redis instanceof Cluster)) return deleteOnNode(redis, prefix, (keys) => redis.unlink(...keys));
  if (redis.status !== 'ready') await redis.ping();
  let deleted = 0;
  for (const node of redis.nodes('master')) {
    deleted += await deleteOnNode(node, prefix, async (keys) =>
      (await Promise.all(keys.map((key) => redis.unlink(key)))).reduce((a, b) => a + b, 0),
    );
  }
  return deleted;
}

async function deleteOnNode(
  node: Redis,
  prefix: string,
  unlink: (keys: string[]) => Promise<number>,
): Promise<number> {
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    cursor = next;
    if (keys.length > 0) deleted += await unlink(keys);
  } while (cursor !== '0');
  return deleted;
}
