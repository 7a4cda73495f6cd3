import type { RedisClient } from '../connections.js';
import { fleetKeys } from '../thread-keys.js';

/** One operator action as the audit log keeps it. */
export interface AuditEntry {
  /** The stream id: its order in the log. */
  id: string;
  /** When it was recorded (Redis clock, ms). */
  at: number;
  /** Who: the name of the admin token used. */
  actor: string;
  /** What, e.g. `threads.pause`, `dead-letters.redrive`. */
  action: string;
  /** On what: thread ids, item ids, or the filter a bulk action matched. */
  target: unknown;
  /** How it went: per item outcomes, counts, or the error. */
  result: unknown;
}

export type AuditRecord = Omit<AuditEntry, 'id' | 'at'>;

/** A replayed action: the answer it gave the first time, kept under its idempotency key. */
export interface StoredAnswer {
  status: number;
  body: unknown;
}

/** The idempotency key's state: unseen (now claimed), in progress elsewhere, or answered before. */
export type IdempotencyClaim =
  | { kind: 'claimed' }
  | { kind: 'pending' }
  | { kind: 'answered'; answer: StoredAnswer };

const PENDING = 'pending';

/**
 * The operators' audit log: a Redis stream trimmed to about `maxEntries` (durable as Redis is, bounded),
 * newest first when read. Also the idempotency keys of admin actions, so a retried action is answered
 * as the first time instead of being done twice.
 */
export class AuditLog {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly maxEntries: number,
  ) {}

  async append(record: AuditRecord): Promise<AuditEntry> {
    const json = JSON.stringify({
      actor: record.actor,
      action: record.action,
      target: record.target,
      result: record.result,
    });
    // `~`: Redis trims whole stream nodes, cheaply, keeping at least maxEntries.
    const id = await this.redis.xadd(
      fleetKeys(this.prefix).audit,
      'MAXLEN',
      '~',
      this.maxEntries,
      '*',
      'entry',
      json,
    );
    return { id: id!, at: streamTime(id!), ...record };
  }

  /** Entries newest first, `limit` at a time, from before stream id `before` (undefined: the newest). */
  async list(
    before: string | undefined,
    limit: number,
  ): Promise<{ items: AuditEntry[]; next: string | undefined }> {
    const start = before === undefined ? '+' : `(${before}`;
    const raw = await this.redis.xrevrange(fleetKeys(this.prefix).audit, start, '-', 'COUNT', limit + 1);
    const items = raw.slice(0, limit).map(([id, fields]) => ({
      id,
      at: streamTime(id),
      ...(JSON.parse(fields[1]!) as AuditRecord),
    }));
    return { items, next: raw.length > limit ? items.at(-1)?.id : undefined };
  }

  /** Claims `digest` (of an idempotency key) for `ttlMs`, unless an action holds or answered it. */
  async claim(digest: string, ttlMs: number): Promise<IdempotencyClaim> {
    const key = fleetKeys(this.prefix).idempotency(digest);
    if ((await this.redis.set(key, PENDING, 'PX', ttlMs, 'NX')) === 'OK') return { kind: 'claimed' };
    const stored = await this.redis.get(key);
    if (stored === null || stored === PENDING) return { kind: 'pending' };
    return { kind: 'answered', answer: JSON.parse(stored) as StoredAnswer };
  }

  /** Keeps the answer of a claimed key for its replays. */
  async answer(digest: string, answer: StoredAnswer, ttlMs: number): Promise<void> {
    await this.redis.set(fleetKeys(this.prefix).idempotency(digest), JSON.stringify(answer), 'PX', ttlMs);
  }

  /** Frees a claimed key whose action failed before it did anything, so a retry may do it. */
  async release(digest: string): Promise<void> {
    await this.redis.del(fleetKeys(this.prefix).idempotency(digest));
  }
}

/** A stream id `<ms>-<seq>`: its milliseconds. */
function streamTime(id: string): number {
  return Number(id.slice(0, id.indexOf('-')));
}

/** Whether `text` is a stream id, as a client may send back a cursor. */
export function isStreamId(text: string): boolean {
  return /^\d{1,20}-\d{1,20}$/.test(text);
}
