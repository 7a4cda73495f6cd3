import type { RedisClient } from '../connections.js';
import { auditComplete } from '../lua/audit-calls.js';
import { Scripts } from '../lua/scripts.js';
import { fleetKeys } from '../thread-keys.js';

/** How an action ended; `pending` until it does (forever, when the process died while it ran). */
export type AuditOutcome = 'pending' | 'ok' | 'failed' | 'partial';

/** An operator action as it is written before it is done. */
export interface AuditIntent {
  /** Who: the name of the admin token used. */
  actor: string;
  /** From where: the client's address as the admin listener sees it (TRUST_PROXY honoured). */
  address: string | null;
  /** What, e.g. `threads.pause`, `dead-letters.redrive`. */
  action: string;
  /** On what: thread ids, item ids, or the filter a bulk action matched. */
  target: unknown;
  /** The items a bulk action chose, by id, before it acted on them. */
  items?: unknown[];
}

/** How an action ended: ok, failed (with its error) or partial (with its counts). */
export interface AuditCompletion {
  outcome: Exclude<AuditOutcome, 'pending'>;
  /** Per item outcomes, counts, what was done, or the error. */
  result: unknown;
}

/** One operator action as the audit log keeps it. */
export interface AuditEntry extends AuditIntent, Omit<AuditCompletion, 'outcome'> {
  /** The stream id: its order in the log. */
  id: string;
  /** When it was begun (Redis clock, ms). */
  at: number;
  outcome: AuditOutcome;
  /** When it ended; null while pending. */
  completedAt: number | null;
}

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
 * The operators' audit log: a Redis stream of actions, each written before it is done and completed
 * after (its outcome kept beside the stream by entry id), trimmed to about `maxEntries` (durable as Redis
 * is, bounded), newest first when read. An action whose process died midway stays `pending`. Also the
 * idempotency keys of admin actions, so a retried action is answered as the first time instead of
 * being done twice.
 */
export class AuditLog {
  private readonly scripts: Scripts;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly maxEntries: number,
  ) {
    this.scripts = new Scripts(redis, [auditComplete]);
  }

  /** Writes an action's intent, before it is done; returns the entry's id, to complete it with. */
  async begin(intent: AuditIntent): Promise<string> {
    const json = JSON.stringify({
      actor: intent.actor,
      address: intent.address,
      action: intent.action,
      target: intent.target,
      ...(intent.items ? { items: intent.items } : {}),
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
    return id!;
  }

  /** Records how the action of entry `id` ended. */
  async complete(id: string, completion: AuditCompletion): Promise<void> {
    const keys = fleetKeys(this.prefix);
    const outcome = JSON.stringify(completion);
    // Twice the log's bound: an action that ended is always newer than the oldest the stream keeps.
    await this.scripts.run(
      auditComplete,
      { outcomes: keys.auditOutcomes, order: keys.auditOutcomeOrder },
      { id, outcome, keep: 2 * this.maxEntries },
    );
  }

  /** Entries newest first, `limit` at a time, from before stream id `before` (undefined: the newest). */
  async list(
    before: string | undefined,
    limit: number,
  ): Promise<{ items: AuditEntry[]; next: string | undefined }> {
    const keys = fleetKeys(this.prefix);
    const start = before === undefined ? '+' : `(${before}`;
    const read = await this.redis.xrevrange(keys.audit, start, '-', 'COUNT', limit + 1);
    const raw = read.slice(0, limit);
    const ids = raw.map(([id]) => id);
    const outcomes = ids.length === 0 ? [] : await this.redis.hmget(keys.auditOutcomes, ...ids);
    const items = raw.map(([id, fields], i) => entry(id, JSON.parse(fields[1]!), outcomes[i] ?? null));
    return { items, next: read.length > limit ? items.at(-1)?.id : undefined };
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

/**
 * An entry as the log shows it: its intent with its outcome. An entry the previous release wrote holds
 * both (`result` was written after the action): `failed` when its result is an error.
 */
function entry(id: string, written: Record<string, unknown>, completed: string | null): AuditEntry {
  const { actor, address = null, action, target, items, result } = written as Partial<AuditEntry>;
  const base = {
    id,
    at: streamTime(id),
    actor: actor!,
    address,
    action: action!,
    target,
    ...(items ? { items } : {}),
  };
  if (completed !== null) {
    const done = JSON.parse(completed) as AuditCompletion & { completedAt: number };
    return { ...base, outcome: done.outcome, result: done.result, completedAt: done.completedAt };
  }
  if (!('result' in written)) return { ...base, outcome: 'pending', result: null, completedAt: null };
  const failed = typeof result === 'object' && result !== null && 'error' in result;
  return { ...base, outcome: failed ? 'failed' : 'ok', result, completedAt: streamTime(id) };
}

/** A stream id `<ms>-<seq>`: its milliseconds. */
function streamTime(id: string): number {
  return Number(id.slice(0, id.indexOf('-')));
}

/** Whether `text` is a stream id, as a client may send back a cursor. */
export function isStreamId(text: string): boolean {
  return /^\d{1,20}-\d{1,20}$/.test(text);
}
