import { Redis } from 'ioredis';

/**
 * How a process talks to Redis. `fail-fast` (ingress): with no offline queue a command sent while
 * Redis is down is rejected at once, and one that hangs is timed out, so a webhook gets 503 in
 * milliseconds and the platform retries instead of hanging past its deadline. `patient` (workers):
 * commands wait out a short reconnect, since a turn in progress has nobody to answer 503 to.
 * Both keep reconnecting in the background, so a process recovers without a restart.
 */
export type ConnectionProfile = { kind: 'fail-fast'; timeoutMs: number } | { kind: 'patient' };

/** The one place Tributary's Redis clients are built (blocking ones are duplicated from these). */
export function openConnection(url: string, profile: ConnectionProfile): Redis {
  // Commands issued in the same event-loop tick (concurrent requests, turns, sweeps) leave in one
  // write instead of one each.
  if (profile.kind === 'patient')
    return new Redis(url, { maxRetriesPerRequest: 3, enableAutoPipelining: true });
  return new Redis(url, {
    enableAutoPipelining: true,
    enableOfflineQueue: false,
    commandTimeout: profile.timeoutMs,
    connectTimeout: profile.timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: (attempt) => Math.min(attempt * 100, 1_000),
  });
}

/**
 * A connection for blocking commands (BullMQ's worker, BLPOP): it must wait for Redis however long it
 * takes, and it is the caller's to disconnect.
 */
export function blockingConnection(redis: Redis): Redis {
  // A blocking command holds the connection: nothing may be pipelined behind it.
  return redis.duplicate({ maxRetriesPerRequest: null, enableAutoPipelining: false });
}

/** Resolves when the connection is ready, or after `timeoutMs` whatever its state. */
export function whenReady(redis: Redis, timeoutMs: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, timeoutMs);
    function done() {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    }
    redis.once('ready', done);
  });
}

/** Errors that mean "Redis is not answering", as opposed to a bug or a refusal. */
export function isRedisUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return (
    /Stream isn't writeable|Command timed out|Connection is closed|ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|LOADING|MaxRetriesPerRequest|enableOfflineQueue/i.test(
      error.message,
    ) || error.name === 'MaxRetriesPerRequestError'
  );
}
