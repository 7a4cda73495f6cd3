import type { Redis } from 'ioredis';
import { threadKeys } from './thread-keys.js';

/** The first message of a thread as the platform reported it. */
export interface StoredThreadParent {
  messageId: string;
  senderId: string;
  senderName: string;
  text: string;
  timestamp: string;
}

/**
 * A thread's parent message, fetched once (by ingress, off the request path) and read by the worker
 * that opens a fresh session. The first writer wins: a parent never changes.
 */
export class ThreadParentStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly buckets: number,
    private readonly ttlSeconds = 30 * 24 * 60 * 60,
  ) {}

  async has(thread: string): Promise<boolean> {
    return (await this.redis.exists(this.key(thread))) === 1;
  }

  /** `none` records that the thread has no parent (the event started it), so nobody fetches again. */
  async set(thread: string, parent: StoredThreadParent | 'none'): Promise<void> {
    await this.redis.set(this.key(thread), JSON.stringify(parent), 'EX', this.ttlSeconds, 'NX');
  }

  async get(thread: string): Promise<StoredThreadParent | undefined> {
    const raw = await this.redis.get(this.key(thread));
    if (raw === null) return undefined;
    const value = JSON.parse(raw) as StoredThreadParent | 'none';
    return value === 'none' ? undefined : value;
  }

  private key(thread: string): string {
    return threadKeys(this.prefix, this.buckets, thread).parent;
  }
}
