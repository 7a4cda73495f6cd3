import type { DeadLetter, ThreadState } from '../batch.js';
import type { RedisClient } from '../connections.js';
import { bucketSummary, LISTING_SCRIPTS } from '../lua/listing-calls.js';
import { Scripts } from '../lua/scripts.js';
import { bucketKeys, bucketOf, decodeThread } from '../thread-keys.js';
import { DeadSets } from './dead-sets.js';
import {
  decodeCursor,
  encodeCursor,
  type IndexEntry,
  type IndexRange,
  readMergedPage,
} from './index-pages.js';
import type { KeysOf } from './keys-of.js';
import type { MessageReceipt, MessageReceipts } from './message-receipts.js';
import type { DeadReply } from './reply-outbox.js';

/** The states an operator lists threads by; `all` is every thread with activity within the idle time. */
export type ThreadListState = 'running' | 'runnable' | 'scheduled' | 'paused' | 'idle' | 'all';

export const THREAD_LIST_STATES: readonly ThreadListState[] = [
  'running',
  'runnable',
  'scheduled',
  'paused',
  'idle',
  'all',
];

/** One thread of a list. Times are Redis-clock milliseconds. */
export interface ThreadRow {
  thread: string;
  status: ThreadState['status'];
  paused: boolean;
  owner: string | null;
  leaseExpiresAt: number | null;
  /** The batch in flight, while running. */
  batchId: string | null;
  /** Messages in the inbox: in flight plus waiting. */
  backlog: number;
  /**
   * When it entered what the list shows: running since its batch was claimed; runnable since it was
   * scheduled; scheduled until it is due; paused since the pause; otherwise its latest activity.
   */
  since: number;
}

/** A page of a list: its items, and the cursor of the next page (undefined on the last). */
export interface Page<T> {
  items: T[];
  next: string | undefined;
}

/** A dead letter as listed: its record without the messages' bodies, which the thread's report has. */
export type DeadLetterRow = Omit<DeadLetter, 'messages'> & { messages: number };
export type DeadReplyRow = Omit<DeadReply, 'payload'> & { thread: string };

/** Counts for the fleet overview, summed over the buckets. */
export interface FleetSummary {
  running: number;
  runnable: number;
  scheduled: number;
  paused: number;
  /** Threads with activity within the idle time, whatever their state. */
  active: number;
  deadLetters: number;
  deadReplies: number;
  /** Dead letters and dead replies by reason, most frequent first. */
  deadLetterReasons: { reason: string; count: number }[];
  deadReplyReasons: { reason: string; count: number }[];
}

/** A cursor the client sent that no page handed out. */
export class BadCursorError extends Error {
  override name = 'BadCursorError';
}

/** Rounds of a filtered list (idle threads, a reason) before a page is returned short: bounded work. */
const FILTER_ROUNDS = 4;
/** Threads one message id is looked up in: a platform's ids repeat across chats. */
const MESSAGE_MATCHES = 50;

const THREAD_RANGES: Record<ThreadListState, IndexRange> = {
  running: { index: (k) => k.run, order: 'asc', min: '-inf', max: '+inf' },
  runnable: { index: (k) => k.sched, order: 'asc', min: '-inf', max: 'now' },
  scheduled: { index: (k) => k.sched, order: 'asc', min: '(now', max: '+inf' },
  paused: { index: (k) => k.paused, order: 'desc', min: '-inf', max: '+inf' },
  idle: { index: (k) => k.activity, order: 'desc', min: '-inf', max: '+inf' },
  all: { index: (k) => k.activity, order: 'desc', min: '-inf', max: '+inf' },
};
const DEAD_LETTERS: IndexRange = { index: (k) => k.deadindex, order: 'desc', min: '-inf', max: '+inf' };
const DEAD_REPLIES: IndexRange = { index: (k) => k.deadreplyindex, order: 'desc', min: '-inf', max: '+inf' };

/**
 * The operators' lists (docs/adr/0026-operator-lists-from-bucket-indexes.md): threads by state, dead
 * letters and dead replies, the overview's counts and a message found by its platform id. Each reads
 * the per-bucket indexes the scripts keep, a page at a time, never the keyspace.
 */
export class FleetListing {
  private readonly scripts: Scripts;
  private readonly dead: DeadSets;

  constructor(
    private readonly redis: RedisClient,
    private readonly keysOf: KeysOf,
    private readonly layout: { prefix: string; buckets: number },
    private readonly receipts: MessageReceipts,
  ) {
    this.scripts = new Scripts(redis, LISTING_SCRIPTS);
    this.dead = new DeadSets(redis, keysOf);
  }

  async threads(state: ThreadListState, cursor: string | undefined, limit: number): Promise<Page<ThreadRow>> {
    const range = THREAD_RANGES[state];
    return this.filtered(range, cursor, limit, async (entries) => {
      const rows = await Promise.all(entries.map((entry) => this.threadRow(range, state, entry)));
      return rows.filter((row): row is ThreadRow => row !== undefined);
    });
  }

  /** Dead letters, newest first; with `reason`, only those of that reason class (the overview's groups). */
  async deadLetters(
    cursor: string | undefined,
    limit: number,
    reason?: string,
  ): Promise<Page<DeadLetterRow>> {
    return this.filtered(DEAD_LETTERS, cursor, limit, async (entries) => {
      const found = await this.dead.records(items(entries), 'letters', reason);
      return found
        .map((record) => record as unknown as DeadLetter)
        .map(({ messages, ...rest }) => ({ ...rest, messages: messages.length }));
    });
  }

  /** Dead replies, newest first; with `reason`, only those of that reason class (the overview's groups). */
  async deadReplies(cursor: string | undefined, limit: number, reason?: string): Promise<Page<DeadReplyRow>> {
    return this.filtered(DEAD_REPLIES, cursor, limit, async (entries) => {
      const found = await this.dead.records(items(entries), 'replies', reason);
      return found
        .map((record) => record as unknown as DeadReply & { thread: string })
        .map(({ payload: _payload, ...rest }) => rest);
    });
  }

  async summary(): Promise<FleetSummary> {
    const { prefix, buckets } = this.layout;
    const parts = await Promise.all(
      Array.from({ length: buckets }, (_, bucket) =>
        this.scripts.run(bucketSummary, bucketKeys(prefix, bucket), {}),
      ),
    );
    const sum = (pick: (part: (typeof parts)[number]) => number) =>
      parts.reduce((total, part) => total + pick(part), 0);
    const reasons = (pick: (part: (typeof parts)[number]) => Map<string, number>) => {
      const totals = new Map<string, number>();
      for (const part of parts) {
        for (const [reason, count] of pick(part)) totals.set(reason, (totals.get(reason) ?? 0) + count);
      }
      return [...totals]
        .map(([reason, count]) => ({ reason, count }))
        .sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason));
    };
    return {
      running: sum((p) => p.running),
      runnable: sum((p) => p.runnable),
      scheduled: sum((p) => p.scheduled),
      paused: sum((p) => p.paused),
      active: sum((p) => p.active),
      deadLetters: sum((p) => p.deadLetters),
      deadReplies: sum((p) => p.deadReplies),
      deadLetterReasons: reasons((p) => p.deadLetterReasons),
      deadReplyReasons: reasons((p) => p.deadReplyReasons),
    };
  }

  /**
   * The receipts of a platform message id, in whichever threads took one (a platform's ids repeat
   * across chats): one indexed range read per bucket, then the receipts themselves
   * (docs/adr/0028-finding-a-message-without-its-thread.md).
   */
  async findMessage(messageId: string): Promise<MessageReceipt[]> {
    const { prefix, buckets } = this.layout;
    // Members are `<message id>/<thread member>`; '0' is the character after '/'.
    const ranges = await Promise.all(
      Array.from({ length: buckets }, (_, bucket) =>
        this.redis.zrange(
          bucketKeys(prefix, bucket).receiptids,
          `[${messageId}/`,
          `(${messageId}0`,
          'BYLEX',
          'LIMIT',
          0,
          MESSAGE_MATCHES,
        ),
      ),
    );
    const threads = ranges
      .flat()
      .map((indexed) => indexed.slice(0, indexed.lastIndexOf('/')) === messageId && indexed)
      .filter((indexed): indexed is string => indexed !== false)
      .map((indexed) => decodeThread(indexed.slice(indexed.lastIndexOf('/') + 1)));
    const receipts = await Promise.all(threads.map((thread) => this.receipts.receipt(thread, messageId)));
    return receipts.filter((receipt): receipt is MessageReceipt => receipt !== null);
  }

  /**
   * Pages of `range` turned into items by `select`, which may drop entries (a filter, a member whose
   * keys have expired): up to FILTER_ROUNDS pages are read to fill one, so a page may come back short,
   * with a cursor to go on from.
   */
  private async filtered<T>(
    range: IndexRange,
    cursor: string | undefined,
    limit: number,
    select: (entries: IndexEntry[]) => Promise<T[]>,
  ): Promise<Page<T>> {
    let after = cursor === undefined ? undefined : decodeCursor(cursor);
    if (cursor !== undefined && after === undefined) throw new BadCursorError('not a cursor of this list');
    const items: T[] = [];
    for (let round = 0; round < FILTER_ROUNDS; round++) {
      const page = await readMergedPage(this.scripts, this.layout, range, after, limit - items.length);
      items.push(...(await select(page.entries)));
      after = page.next;
      if (after === undefined || items.length >= limit) break;
    }
    return { items, next: after === undefined ? undefined : encodeCursor(after) };
  }

  private async threadRow(
    range: IndexRange,
    state: ThreadListState,
    { member, score }: IndexEntry,
  ): Promise<ThreadRow | undefined> {
    const thread = decodeThread(member);
    const k = this.keysOf(thread);
    const [
      [status = null, owner = null, lease = null, paused = null, batch = null, claimed = null],
      backlog,
    ] = await Promise.all([
      this.redis.hmget(k.state, 'status', 'owner', 'lease', 'paused', 'batch', 'claimed'),
      this.redis.xlen(k.inbox),
    ]);
    if (status === null) {
      // Its keys expired since it was indexed: the index forgets it too.
      await this.redis.zrem(
        range.index(bucketKeys(this.layout.prefix, bucketOf(thread, this.layout.buckets))),
        member,
      );
      return undefined;
    }
    const row: ThreadRow = {
      thread,
      status: status as ThreadState['status'],
      paused: paused === '1',
      owner,
      leaseExpiresAt: lease === null ? null : Number(lease),
      batchId: status === 'running' ? batch : null,
      backlog,
      since: state === 'running' && claimed !== null ? Number(claimed) : score,
    };
    if (state === 'idle' && (row.status !== 'idle' || row.paused)) return undefined;
    return row;
  }
}

/** The index entries' members: the items `<thread member>/<id>` of a dead set. */
function items(entries: IndexEntry[]): string[] {
  return entries.map((entry) => entry.member);
}
