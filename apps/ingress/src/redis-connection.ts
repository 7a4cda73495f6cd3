import { Redis } from 'ioredis';

/**
 * A connection that fails fast: with no offline queue a command sent while Redis is down is rejected
 * at once, and one that hangs is timed out, so a webhook gets 503 in milliseconds and the platform
 * retries, instead of a hang past the platform's deadline. It keeps reconnecting in the background,
 * so ingress recovers without a restart.
 */
export function failFastRedis(url: string, timeoutMs: number): Redis {
  return new Redis(url, {
    enableOfflineQueue: false,
    commandTimeout: timeoutMs,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: (attempt) => Math.min(attempt * 100, 1_000),
  });
}

/** Resolves when the connection is ready, or after `timeoutMs` whatever its state. */
export function redisReady(redis: Redis, timeoutMs: number): Promise<void> {
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
