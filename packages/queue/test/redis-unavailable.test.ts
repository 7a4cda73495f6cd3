import { freePort, type RedisHandle, startRedis } from '@tributary/testkit';
import { Redis, ReplyError } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { type ConnectionProfile, openConnection, type RedisClient, whenReady } from '../src/connections.js';
import { LeaseLostError } from '../src/errors.js';
import { isRedisUnavailable } from '../src/redis-unavailable.js';

const FAIL_FAST: ConnectionProfile = { kind: 'fail-fast', timeoutMs: 300 };

const opened: RedisClient[] = [];
const servers: RedisHandle[] = [];

afterEach(async () => {
  for (const client of opened.splice(0)) client.disconnect();
  for (const server of servers.splice(0)) await server.stop();
});

function client(url: string, profile: ConnectionProfile): RedisClient {
  const redis = openConnection(url, profile);
  opened.push(redis);
  return redis;
}

async function server(args: readonly string[] = []): Promise<RedisHandle> {
  const handle = await startRedis({ private: true, args });
  servers.push(handle);
  return handle;
}

/** The first connection error `redis` reports. */
function connectionError(redis: RedisClient): Promise<Error> {
  return new Promise((resolve) => redis.once('error', resolve));
}

function failure(command: Promise<unknown>): Promise<Error> {
  return command.then(
    () => {
      throw new Error('the command succeeded');
    },
    (error: Error) => error,
  );
}

async function closedPortUrl(): Promise<string> {
  return `redis://127.0.0.1:${await freePort()}`;
}

describe('isRedisUnavailable, on real failures', () => {
  it('a closed port: the socket error by its code, the refused command by ioredis', async () => {
    const redis = client(await closedPortUrl(), FAIL_FAST);
    const refused = await connectionError(redis);
    expect(refused).toMatchObject({ code: 'ECONNREFUSED' });
    expect(isRedisUnavailable(refused)).toBe(true);
    const command = await failure(redis.get('k'));
    expect(command.message).toBe("Stream isn't writeable and enableOfflineQueue options is false");
    expect(isRedisUnavailable(command)).toBe(true);
  });

  it('a closed port, waited out: the retries a patient command was allowed run out', async () => {
    const redis = client(await closedPortUrl(), { kind: 'patient' });
    const error = await failure(redis.get('k'));
    expect(error.name).toBe('MaxRetriesPerRequestError');
    expect(isRedisUnavailable(error)).toBe(true);
  });

  it('a name that does not resolve', async () => {
    const error = await connectionError(client('redis://tributary.invalid:6379', FAIL_FAST));
    expect(['ENOTFOUND', 'EAI_AGAIN']).toContain((error as NodeJS.ErrnoException).code);
    expect(isRedisUnavailable(error)).toBe(true);
  });

  it('a server killed under a command in flight, and commands after it', async () => {
    const redis = await server();
    const connection = client(redis.url, FAIL_FAST);
    await whenReady(connection, 2_000);
    const inFlight = failure(connection.blpop('never', 5));
    await redis.kill();
    const aborted = await inFlight;
    expect(aborted.name).toBe('MaxRetriesPerRequestError');
    expect(isRedisUnavailable(aborted)).toBe(true);
    const after = await failure(connection.get('k'));
    expect(isRedisUnavailable(after)).toBe(true);
  });

  it('a frozen server: the command times out', async () => {
    const redis = await server();
    const connection = client(redis.url, FAIL_FAST);
    await whenReady(connection, 2_000);
    await redis.kill('SIGSTOP');
    try {
      const error = await failure(connection.get('k'));
      expect(error.message).toBe('Command timed out');
      expect(isRedisUnavailable(error)).toBe(true);
    } finally {
      await redis.kill('SIGCONT');
    }
  });

  it('a closed connection', async () => {
    const redis = await server();
    const connection = new Redis(redis.url);
    await connection.ping();
    await connection.quit();
    const error = await failure(connection.get('k'));
    expect(error.message).toBe('Connection is closed.');
    expect(isRedisUnavailable(error)).toBe(true);
  });

  it('a replica without its primary: MASTERDOWN to a read, READONLY to a write', async () => {
    const primaryPort = await freePort();
    const replica = await server(['--replicaof', '127.0.0.1', String(primaryPort)]);
    const connection = new Redis(replica.url);
    opened.push(connection);
    const readonly = await failure(connection.set('k', 'v'));
    expect(readonly).toBeInstanceOf(ReplyError);
    expect(readonly.message).toMatch(/^READONLY /);
    expect(isRedisUnavailable(readonly)).toBe(true);
    await connection.config('SET', 'replica-serve-stale-data', 'no');
    const masterdown = await failure(connection.get('k'));
    expect(masterdown.message).toMatch(/^MASTERDOWN /);
    expect(isRedisUnavailable(masterdown)).toBe(true);
  });

  it('a refusal or a bug is not an outage, whatever its text says', async () => {
    const redis = await server();
    const connection = new Redis(redis.url);
    opened.push(connection);
    await connection.set('string', 'v');
    const wrongType = await failure(connection.lpush('string', 'x'));
    expect(wrongType.message).toMatch(/^WRONGTYPE /);
    const noScript = await failure(connection.evalsha('0'.repeat(40), 0));
    expect(noScript.message).toMatch(/^NOSCRIPT /);
    for (const error of [
      wrongType,
      noScript,
      new Error('connect ECONNREFUSED 127.0.0.1:6379'),
      new TypeError('Connection is closed.'),
      new LeaseLostError('slack:C1:t1', 3),
      'ECONNREFUSED',
    ]) {
      expect(isRedisUnavailable(error)).toBe(false);
    }
  });

  // A loading server, a Cluster slot without a primary or mid-migration: the reply's code, as the
  // Cluster suite sees from a real one (cluster.test.ts).
  it.each([
    'LOADING Redis is loading the dataset in memory',
    'CLUSTERDOWN The cluster is down',
    'TRYAGAIN Multiple keys request during rehashing of slot',
    'MOVED 3999 127.0.0.1:7001',
    'ASK 3999 127.0.0.1:7001',
  ])('a reply whose code says the server cannot serve now: %s', (message) => {
    expect(isRedisUnavailable(new ReplyError(message))).toBe(true);
  });
});
