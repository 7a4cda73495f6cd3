import { type LogSink, silentLogger } from '@tributary/observability';
import type { Redis } from 'ioredis';
import { dataNodes, type RedisClient } from './connections.js';
import { UnsafeRedisError } from './errors.js';

export interface RedisSafetyReport {
  maxmemoryPolicy: string;
  aofEnabled: boolean;
  appendfsync: string | null;
}

/**
 * Any eviction policy but `noeviction` lets Redis drop inbox entries that ingress has acknowledged.
 * Read from INFO, which managed Redis services allow when CONFIG is disabled.
 */
export async function checkRedisSafety(
  redis: RedisClient,
  mode: 'refuse' | 'warn',
  logger: LogSink = silentLogger,
): Promise<RedisSafetyReport> {
  // Every primary of a Cluster holds acknowledged messages: each weakness of any of them is reported.
  const reports = await Promise.all((await dataNodes(redis)).map(readSafety));
  const first = reports[0]!;
  const evicting = reports.find((r) => r.maxmemoryPolicy !== 'noeviction');
  const withoutAof = reports.find((r) => !r.aofEnabled);
  const report: RedisSafetyReport = {
    maxmemoryPolicy: evicting?.maxmemoryPolicy ?? first.maxmemoryPolicy,
    aofEnabled: withoutAof === undefined,
    appendfsync: (withoutAof ?? first).appendfsync,
  };
  if (report.maxmemoryPolicy !== 'noeviction') {
    const message =
      `Redis maxmemory-policy is '${report.maxmemoryPolicy}': under memory pressure it may evict queued ` +
      "messages that were already acknowledged. Set 'maxmemory-policy noeviction'.";
    if (mode === 'refuse') throw new UnsafeRedisError(message);
    logger.error({ ...report }, message);
  }
  if (!report.aofEnabled) {
    logger.warn({ ...report }, 'Redis AOF is off: a Redis crash loses acknowledged messages (see docs/adr)');
  }
  return report;
}

async function readSafety(node: Redis): Promise<RedisSafetyReport> {
  const info = parseInfo(`${await node.info('memory')}\n${await node.info('persistence')}`);
  return {
    maxmemoryPolicy: info.get('maxmemory_policy') ?? 'unknown',
    aofEnabled: info.get('aof_enabled') === '1',
    appendfsync: await node
      .config('GET', 'appendfsync')
      .then((pair) => (Array.isArray(pair) && typeof pair[1] === 'string' ? pair[1] : null))
      .catch(() => null),
  };
}

function parseInfo(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const at = line.indexOf(':');
    if (at > 0 && !line.startsWith('#')) fields.set(line.slice(0, at), line.slice(at + 1).trim());
  }
  return fields;
}
