import type { Redis } from 'ioredis';
import type { KeysOf } from './keys-of.js';

/** Replies and notices are kept apart: a batch may have one of each. */
export type ReplyKind = 'reply' | 'notice';

const RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * What has reached the platform of a batch's outbound messages: whether a (batch, kind) was delivered
 * whole, and the platform message id of each part posted so far, so a batch delivered again edits its
 * parts instead of posting them twice. Kept a week, long past any re-delivery.
 */
export class ReplyRecords {
  constructor(
    private readonly redis: Redis,
    private readonly keysOf: KeysOf,
    private readonly retentionMs = RETENTION_MS,
  ) {}

  async delivered(thread: string, batchId: string, kind: ReplyKind): Promise<boolean> {
    return (await this.redis.exists(this.keysOf(thread).outbox(batchId, kind))) === 1;
  }

  async markDelivered(thread: string, batchId: string, kind: ReplyKind): Promise<void> {
    await this.redis.set(
      this.keysOf(thread).outbox(batchId, kind),
      String(Date.now()),
      'PX',
      this.retentionMs,
    );
  }

  /** Part number → platform message id. */
  async postedParts(thread: string, batchId: string, kind: ReplyKind): Promise<Map<number, string>> {
    const fields = await this.redis.hgetall(this.partsKey(thread, batchId, kind));
    return new Map(Object.entries(fields).map(([part, id]) => [Number(part), id]));
  }

  async recordPart(
    thread: string,
    batchId: string,
    kind: ReplyKind,
    part: number,
    messageId: string,
  ): Promise<void> {
    const key = this.partsKey(thread, batchId, kind);
    await this.redis.multi().hset(key, String(part), messageId).pexpire(key, this.retentionMs).exec();
  }

  private partsKey(thread: string, batchId: string, kind: ReplyKind): string {
    return this.keysOf(thread).outbox(batchId, `${kind}:parts`);
  }
}
