import type { Redis } from 'ioredis';

/**
 * The platform message ids of a batch's reply, part by part. A batch delivered again after a crash
 * finds its parts here and edits them instead of posting them again.
 */
export class PostedParts {
  constructor(
    private readonly redis: Redis,
    private readonly keyOf: (thread: string, batchId: string, kind: string) => string,
    private readonly retentionMs = 7 * 24 * 60 * 60 * 1000,
  ) {}

  async get(thread: string, batchId: string, kind: string): Promise<Map<number, string>> {
    const fields = await this.redis.hgetall(this.keyOf(thread, batchId, `${kind}:parts`));
    return new Map(Object.entries(fields).map(([part, id]) => [Number(part), id]));
  }

  async set(thread: string, batchId: string, kind: string, part: number, messageId: string): Promise<void> {
    const key = this.keyOf(thread, batchId, `${kind}:parts`);
    await this.redis.multi().hset(key, String(part), messageId).pexpire(key, this.retentionMs).exec();
  }
}
