import { Cluster, Redis } from 'ioredis';
import { type RedisAddress, redisAddress } from './redis-address.js';

/** A client of a single Redis or of a Redis Cluster: the same commands, routed by slot in a Cluster. */
export type RedisClient = Redis | Cluster;

/**
 * How a process talks to Redis. `fail-fast` (ingress): with no offline queue a command sent while
 * Redis is down is rejected at once, and one that hangs is timed out, so a webhook gets 503 in
 * milliseconds and the platform retries instead of hanging past its deadline. `patient` (workers):
 * commands wait out a short reconnect, since a turn in progress has nobody to answer 503 to.
 * Both keep reconnecting in the background, so a process recovers without a restart.
 */
export type ConnectionProfile = { kind: 'fail-fast'; timeoutMs: number } | { kind: 'patient' };

// A failover takes the cluster's node timeout plus an election; the patient profile waits it out.
const PATIENT_CLUSTER_RETRY_MS = 300;

/**
 * The one place Tributary's Redis clients are built (blocking ones are duplicated from these). `url` is
 * a `redis://` URL or a Cluster's seed nodes as `redis-cluster://host:port,host:port` (see
 * redis-address.ts); in a Cluster every script and every BullMQ queue keeps to one hash tag.
 */
export function openConnection(url: string, profile: ConnectionProfile): RedisClient {
  const client = connect(url, profile);
  reportErrors(client, new ConnectionErrors());
  return client;
}

function connect(url: string, profile: ConnectionProfile): RedisClient {
  const address = redisAddress(url);
  if (address.kind === 'cluster') return openCluster(address, profile);
  // Each command is written when it is issued: ioredis's auto-pipelining (one write per event-loop
  // tick) cost more CPU than the writes it saved and added a tick to every round trip (docs/adr/0023).
  if (profile.kind === 'patient') return new Redis(url, { maxRetriesPerRequest: 3 });
  return new Redis(url, failFastOptions(profile.timeoutMs));
}

/**
 * Where the connection errors of one client and of every connection duplicated from it go. A client
 * with no `error` listener makes ioredis print "[ioredis] Unhandled error event" on every reconnect
 * attempt (thousands of lines through an outage), so each client built here is given one at birth,
 * which hands the error to whoever listens (the store's owner logs them once per condition).
 */
class ConnectionErrors {
  private readonly listeners = new Set<(error: Error) => void>();

  listen(listener: (error: Error) => void): void {
    this.listeners.add(listener);
  }

  readonly report = (error: Error): void => {
    for (const listener of this.listeners) listener(error);
  };
}

const errorsOf = new WeakMap<RedisClient, ConnectionErrors>();

function reportErrors(client: RedisClient, errors: ConnectionErrors): ConnectionErrors {
  client.on('error', errors.report);
  errorsOf.set(client, errors);
  return errors;
}

/** Connection problems of `redis` and of the connections duplicated from it (each reconnects on its own). */
export function onConnectionError(redis: RedisClient, listener: (error: Error) => void): void {
  (errorsOf.get(redis) ?? reportErrors(redis, new ConnectionErrors())).listen(listener);
}

function failFastOptions(timeoutMs: number) {
  return {
    enableOfflineQueue: false,
    commandTimeout: timeoutMs,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: (attempt: number) => Math.min(attempt * 100, 1_000),
  };
}

function openCluster(
  address: Extract<RedisAddress, { kind: 'cluster' }>,
  profile: ConnectionProfile,
): Cluster {
  const credentials = { username: address.username, password: address.password, tls: address.tls };
  const clusterRetryStrategy = (attempt: number) => Math.min(attempt * 100, 1_000);
  if (profile.kind === 'patient') {
    return new Cluster(address.nodes, {
      clusterRetryStrategy,
      retryDelayOnFailover: PATIENT_CLUSTER_RETRY_MS,
      retryDelayOnClusterDown: PATIENT_CLUSTER_RETRY_MS,
      redisOptions: { ...credentials, maxRetriesPerRequest: 3 },
    });
  }
  const {
    enableOfflineQueue,
    retryStrategy: _nodeRetry,
    ...nodeOptions
  } = failFastOptions(profile.timeoutMs);
  return new Cluster(address.nodes, {
    enableOfflineQueue,
    clusterRetryStrategy,
    // A redirection (MOVED/ASK) is followed at once; a slot with no primary fails the call (503).
    retryDelayOnClusterDown: 0,
    retryDelayOnTryAgain: 0,
    redisOptions: { ...credentials, ...nodeOptions },
  });
}

/**
 * A connection for blocking commands (BullMQ's worker, BLPOP): it must wait for Redis however long it
 * takes, and it is the caller's to disconnect.
 */
export function blockingConnection(redis: RedisClient): RedisClient {
  const duplicate =
    redis instanceof Cluster
      ? redis.duplicate([], {
          redisOptions: { ...redis.options.redisOptions, maxRetriesPerRequest: null },
        })
      : redis.duplicate({ maxRetriesPerRequest: null });
  reportErrors(duplicate, errorsOf.get(redis) ?? new ConnectionErrors());
  return duplicate;
}

/**
 * The servers that hold data: each primary of a Cluster, or the one Redis. Per-server commands
 * (SCRIPT, INFO, CONFIG) go to each of them; data commands go through the client, which routes them.
 * A Cluster client learns its primaries on connecting: a first command waits for that (patient) or
 * fails (fail-fast).
 */
export async function dataNodes(redis: RedisClient): Promise<Redis[]> {
  if (!(redis instanceof Cluster)) return [redis];
  if (redis.status !== 'ready') await redis.ping();
  return redis.nodes('master');
}

/** Resolves when the connection is ready, or after `timeoutMs` whatever its state. */
export function whenReady(redis: RedisClient, timeoutMs: number): Promise<void> {
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
