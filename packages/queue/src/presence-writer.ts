import { openConnection, type RedisClient } from './connections.js';
import { type WorkerKeys, workerKeys } from './thread-keys.js';
import { PRESENCE } from './worker-presence.js';

export { PRESENCE };

/**
 * A worker's presence key (ADR 0014) written by a process beside the worker (its agent warden,
 * docs/adr/0037) on a connection of its own, so the worker's busy event loop cannot delay it. Commands
 * fail fast: a write that cannot be confirmed in time is one the caller must treat as not made.
 */
export class PresenceWriter {
  readonly #redis: RedisClient;
  readonly #keys: WorkerKeys;

  /** `onError` hears every connection error, so none goes unhandled. */
  constructor(url: string, prefix: string, owner: string, onError: (error: Error) => void) {
    this.#redis = openConnection(url, { kind: 'fail-fast', timeoutMs: 1_000 });
    this.#redis.on('error', onError);
    this.#keys = workerKeys(prefix, owner);
  }

  /** Announces the worker for `ttlMs`; resolves once Redis took it. */
  async write(value: string, ttlMs: number): Promise<void> {
    await this.#redis.set(this.#keys.presence, value, 'PX', ttlMs);
  }

  /**
   * Keeps the worker present for `ttlMs`, taking no direct doorbells, and says which of its agent
   * processes survived the kill: no sweeper takes its threads over while both keys stand. Both keys
   * share the worker's hash tag, so they are written together.
   */
  async holdFor(survivors: readonly number[], ttlMs: number): Promise<void> {
    await this.#redis
      .multi()
      .set(this.#keys.presence, PRESENCE.retiring, 'PX', ttlMs)
      .set(this.#keys.survivors, JSON.stringify({ pids: survivors }), 'PX', ttlMs)
      .exec();
  }

  async withdraw(): Promise<void> {
    await this.#redis.del(this.#keys.presence, this.#keys.survivors);
  }

  close(): void {
    this.#redis.disconnect();
  }
}
