import type { RedisClient } from '../connections.js';
import type { KeysOf } from './keys-of.js';

/**
 * A thread's parent message, fetched once (by ingress, off the request path) and read by the worker
 * that opens a fresh session. The first writer wins: a parent never changes.
 */
export class ThreadParentStore<Parent extends object> {
  constructor(
    private readonly redis: RedisClient,
    private readonly keysOf: KeysOf,
    /** The queue's `idleTtlMs`: a parent is kept as long as its thread's other keys. */
    private readonly ttlMs: number,
  ) {}

  async has(thread: string): Promise<boolean> {
    return (await this.redis.exists(this.key(thread))) === 1;
  }

  /** `none` records that the thread has no parent (the event started it), so nobody fetches again. */
  async set(thread: string, parent: Parent | 'none'): Promise<void> {
    await this.redis.set(this.key(thread), JSON.stringify(parent), 'PX', this.ttlMs, 'NX');
  }

  async get(thread: string): Promise<Parent | undefined> {
    const raw = await this.redis.get(this.key(thread));
    if (raw === null) return undefined;
    const value = JSON.parse(raw) as Parent | 'none';
    return value === 'none' ? undefined : value;
  }

  private key(thread: string): string {
    return this.keysOf(thread).parent;
  }
}
