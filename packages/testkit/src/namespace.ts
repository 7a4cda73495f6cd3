import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

/** A key prefix no other suite or test uses, so suites sharing one Redis never see each other's keys. */
export function uniquePrefix(label: string): string {
  return `t${randomBytes(4).toString('hex')}-${label.replace(/[^a-z0-9]/gi, '')}`;
}

/** Deletes every key under `prefix` (ours and BullMQ's). */
export async function deletePrefix(redis: Redis, prefix: string): Promise<number> {
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    cursor = next;
    if (keys.length > 0) deleted += await redis.unlink(...keys);
  } while (cursor !== '0');
  return deleted;
}
