import type { BatchRecord } from '../batch.js';
import type { RedisClient } from '../connections.js';
import type { KeysOf } from './keys-of.js';

/** Each thread's records of ended batches, a stream the commit and fail scripts append to and trim. */
export class BatchHistory {
  constructor(
    private readonly redis: RedisClient,
    private readonly keysOf: KeysOf,
    /** How many records a read returns unless asked for fewer: what the scripts keep. */
    private readonly limit: number,
  ) {}

  /** Records of ended batches (every status), newest first. */
  async of(thread: string, limit = this.limit): Promise<BatchRecord[]> {
    const entries = await this.redis.xrevrange(this.keysOf(thread).history, '+', '-', 'COUNT', limit);
    // Each entry has one field, `record`, holding the JSON.
    return entries.map(([, fields]) => JSON.parse(fields[1]!) as BatchRecord);
  }
}
