import type { BatchRecord, BatchStatus } from '../batch.js';
import type { RedisClient } from '../connections.js';
import type { BatchHistory } from './batch-history.js';
import type { KeysOf } from './keys-of.js';

/** A batch a message travelled in, and how it ended: `running` while its turn runs, `retrying` after a failed turn. */
export interface BatchPlace {
  /** null once the batch's record has left the history (by count or age). */
  id: string | null;
  outcome: BatchStatus | 'running' | 'retrying' | 'unrecorded';
  stopReason?: string;
}

/**
 * Where an inbox entry is: waiting (`paused` while its thread is paused: no turn starts until it is
 * resumed), handed to a turn, or dropped before (`/cancel-all`, `/reset`).
 */
export type EntryPlace =
  | { status: 'queued'; paused?: true }
  | { status: 'batched'; batch: BatchPlace }
  | { status: 'dropped' };

/**
 * Where one platform message of a thread went, for the admin API. `deleted`: removed while buffered,
 * the agent never saw it. A message edited while buffered is where its entry is, with `editsInPlace`;
 * an edit that came after dispatch travels as an event of its own (`edit`); a delete after dispatch
 * is recorded (`deletedAfterDispatch`) and starts no turn.
 */
export type MessageReceipt = { thread: string; messageId: string } & (
  | { status: 'refused'; reason: string }
  | { status: 'deleted' }
  | (EntryPlace & {
      editsInPlace?: number;
      edit?: EntryPlace;
      deletedAfterDispatch?: true;
    })
);

/** The receipt as the scripts store it (lib/receipts.lua). */
interface StoredReceipt {
  sid?: string;
  edits?: number;
  editSid?: string;
  deleted?: 'buffered' | 'dispatched';
  refused?: string;
}

/**
 * Reads receipts. The scripts record only what they decide (accepted at an entry, edited, deleted,
 * refused); whether the entry still waits, runs or ended is read here from the thread's state and
 * history, so dispatch and commit pay nothing for receipts.
 */
export class MessageReceipts {
  constructor(
    private readonly redis: RedisClient,
    private readonly keysOf: KeysOf,
    private readonly history: BatchHistory,
  ) {}

  async receipt(thread: string, messageId: string): Promise<MessageReceipt | null> {
    const raw = await this.redis.hget(this.keysOf(thread).receipts, messageId);
    if (raw === null) return null;
    const stored = JSON.parse(raw) as StoredReceipt;
    const head = { thread, messageId };
    // A refused message edited into one we took has the edit's entry only.
    if (stored.refused !== undefined && stored.sid === undefined && stored.editSid === undefined) {
      return { ...head, status: 'refused', reason: stored.refused };
    }
    if (stored.deleted === 'buffered') return { ...head, status: 'deleted' };
    const places = new EntryPlaces(this.redis, this.keysOf, this.history, thread);
    // An edit that arrived unknown to us (its original refused or forgotten) has only its own entry.
    const own = stored.sid === undefined ? undefined : await places.of(stored.sid);
    const edit = stored.editSid === undefined ? undefined : await places.of(stored.editSid);
    return {
      ...head,
      ...(own ?? edit ?? { status: 'dropped' }),
      ...(stored.edits ? { editsInPlace: stored.edits } : {}),
      ...(own && edit ? { edit } : {}),
      ...(stored.deleted === 'dispatched' ? { deletedAfterDispatch: true as const } : {}),
    };
  }
}

/** Places of a thread's inbox entries, reading its state and history once. */
class EntryPlaces {
  private state?: Promise<(string | null)[]>;
  private records?: Promise<BatchRecord[]>;

  constructor(
    private readonly redis: RedisClient,
    private readonly keysOf: KeysOf,
    private readonly history: BatchHistory,
    private readonly thread: string,
  ) {}

  async of(sid: string): Promise<EntryPlace> {
    const k = this.keysOf(this.thread);
    this.state ??= this.redis.hmget(k.state, 'read', 'acked', 'batch', 'status', 'paused');
    const [read, acked, batch, status, paused] = await this.state;
    if (laterId(sid, read ?? '0-0')) {
      const entry = await this.redis.xrange(k.inbox, sid, sid);
      if (entry.length === 0) return { status: 'dropped' };
      return paused === '1' ? { status: 'queued', paused: true } : { status: 'queued' };
    }
    if (laterId(sid, acked ?? '0-0')) {
      return {
        status: 'batched',
        batch: { id: batch ?? null, outcome: status === 'running' ? 'running' : 'retrying' },
      };
    }
    this.records ??= this.history.of(this.thread);
    const record = (await this.records).find((r) => r.messages.some((m) => m.sid === sid));
    if (!record) return { status: 'batched', batch: { id: null, outcome: 'unrecorded' } };
    return {
      status: 'batched',
      batch: {
        id: record.batchId,
        outcome: record.status,
        ...(record.stopReason === undefined ? {} : { stopReason: record.stopReason }),
      },
    };
  }
}

/** Whether stream id `a` comes after `b` ('<ms>-<seq>', compared as numbers). */
function laterId(a: string, b: string): boolean {
  const [aMs, aSeq] = a.split('-').map(BigInt) as [bigint, bigint];
  const [bMs, bSeq] = b.split('-').map(BigInt) as [bigint, bigint];
  return aMs > bMs || (aMs === bMs && aSeq > bSeq);
}
