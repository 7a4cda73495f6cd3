import { openConnection, type RedisClient } from './connections.js';
import { workerKeys } from './thread-keys.js';

/**
 * A worker's presence key (ADR 0014) written by a process beside the worker (its agent warden,
 * docs/adr/0037) on a connection of its own, so the worker's busy event loop cannot delay it. Commands
 * fail fast: a write that cannot be confirmed in time is one the caller must treat as not made.
 */
export class PresenceWriter {
  readonly #redis: RedisClient;
  readonly #key: string;

  /** `onError` hears every connection error, so none goes unhandled. */
  constructor(url: string, prefix: string, owner: string, onError: (error: Error) => void) {
    this.#redis = openConnection(url, { kind: 'fail-fast', timeoutMs: 1_000 });
    this.#redis.on('error', onError);
    this.#key = workerKeys(prefix, owner).presence;
  }

  /** Announces the worker for `ttlMs`; resolves once Redis took it. */
  async write(value: string, ttlMs: number): Promise<void> {
    await this.#redis.set(this.#key, value, 'PX', ttlMs);
  }

  async withdraw(): Promise<void> {
    await this.#redis.del(this.#key);
  }

  close(): void {
    this.#redis.disconnect();
  }
}
