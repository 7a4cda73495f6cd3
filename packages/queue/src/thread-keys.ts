/**
 * Every Redis key the queue uses is built here and passed to scripts through KEYS. All keys of one
 * thread carry its bucket's hash tag `{b<n>}`, so every script touches a single Cluster slot.
 */

/** Upper bound on buckets: the bucket number occupies 10 bits of a batch id. */
export const MAX_BUCKETS = 1024;

/** A thread's keys, its bucket's indexes included, so a script call picks what it declares by name. */
export interface ThreadKeys extends BucketKeys {
  readonly thread: string;
  /** The thread id as it appears inside keys and index members: injective, no ':' '{' '}'. */
  readonly member: string;
  readonly state: string;
  readonly inbox: string;
  /** Stream of batch records (committed, failed, dead-lettered), trimmed by count and age. */
  readonly history: string;
  /** The thread's dead letters as the previous layout kept them (a JSON list), moved on first touch. */
  readonly dead: string;
  /** The thread's agent session as last persisted by a worker (session continuity). */
  readonly session: string;
  /** Gate state, written by enqueue: whether we are involved in the thread, bot messages in a row. */
  readonly gate: string;
  /** The message the thread started from, for a fresh session's first prompt. */
  readonly parent: string;
  /**
   * The thread's dedup window: a hash from each idempotency key seen (as `dedupMember` writes it) to the
   * stream id it was accepted at, and the same keys scored by when they expire.
   */
  readonly dedup: string;
  readonly dedupUntil: string;
  /** The thread's reply outbox: committed replies and notices waiting for delivery, in commit order. */
  readonly replies: string;
  /** Held by the worker delivering the thread's replies, so they go out in order and once. */
  readonly replyLock: string;
  /** Its dead replies as the previous layout kept them (a JSON list), moved on first touch. */
  readonly deadReplies: string;
  /** The platform message ids of a reply's parts posted so far (a retry edits, never reposts). */
  postedParts(replyId: string): string;
  /** Receipts: where each of the thread's platform messages went, by platform message id (a hash). */
  readonly receipts: string;
  /** The receipts' message ids by first sighting, so the oldest are dropped past `receiptsMax`. */
  readonly receiptOrder: string;
}

export interface BucketKeys {
  readonly bucket: number;
  /** Threads waiting for a doorbell, scored by when they were (re)scheduled. */
  readonly sched: string;
  /** Threads with a running turn, scored by lease expiry. */
  readonly run: string;
  readonly batchseq: string;
  /**
   * The bucket's dead letters, each an item `<thread member>/<batch id>` (docs/adr/0043): `deadindex`
   * scores them by when they died, `deadrecords` holds each one's record, `deadthreads` holds them all
   * scored 0 (a thread's are one prefix range), `deadclassof` each one's reason class and `deadclasses`
   * the count of each class (the grouping by reason).
   */
  readonly deadindex: string;
  readonly deadrecords: string;
  readonly deadthreads: string;
  readonly deadclassof: string;
  readonly deadclasses: string;
  /** Counts by raw reason of dead letters the previous layout kept (thread list `dead`), until moved. */
  readonly deadreasons: string;
  /** Threads with replies to deliver, scored by when the next attempt is due. */
  readonly replydue: string;
  /** The bucket's dead replies, items `<thread member>/<reply id>`, kept as the dead letters are. */
  readonly deadreplyindex: string;
  readonly deadreplyrecords: string;
  readonly deadreplythreads: string;
  readonly deadreplyclassof: string;
  readonly deadreplyclasses: string;
  /** Counts by raw reason of dead replies the previous layout kept (thread list `deadReplies`). */
  readonly deadreplyreasons: string;
  /** Dead letters and dead replies the TTL and the caps dropped, by `<kind>:<cause>`: a running total. */
  readonly deadevicted: string;
  /** Paused threads, scored by when they were paused. */
  readonly paused: string;
  /**
   * Threads by their latest activity (a message accepted, a turn ended), scored by its time; members
   * older than the idle time (whose keys have expired) are trimmed as new ones come.
   */
  readonly activity: string;
  /**
   * The bucket's receipts by platform message id: members `<message id>/<thread member>`, all scored 0
   * so one message id's threads are found by a prefix range (a thread member holds no '/').
   */
  readonly receiptids: string;
  /** The same members scored by when their receipt was last written, so old ones are trimmed. */
  readonly receiptidsage: string;
  readonly sweepLock: string;
}

/**
 * Percent-encoding is injective on well-formed strings and escapes ':' '{' '}' and every other byte
 * that could split a key or a hash tag. A lone surrogate would be replaced when encoded to UTF-8, so
 * two different ids could meet: such ids are refused.
 */
export function encodeThread(thread: string): string {
  if (thread.length === 0) throw new TypeError('thread id must not be empty');
  if (!thread.isWellFormed()) throw new TypeError('thread id must be a well-formed UTF-16 string');
  return encodeURIComponent(thread).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

export function decodeThread(member: string): string {
  return decodeURIComponent(member);
}

/** FNV-1a over the UTF-8 bytes: stable across processes and releases, cheap, well spread. */
export function bucketOf(thread: string, buckets: number): number {
  let hash = 0x811c9dc5;
  const bytes = Buffer.from(thread, 'utf8');
  // An indexed loop: a Buffer's iterator was a tenth of ingress's CPU.
  for (let i = 0; i < bytes.length; i++) {
    hash ^= bytes[i]!;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % buckets;
}

export function bucketKeys(prefix: string, bucket: number): BucketKeys {
  const base = `${prefix}:{b${bucket}}`;
  return {
    bucket,
    sched: `${base}:sched`,
    run: `${base}:run`,
    batchseq: `${base}:batchseq`,
    // Not `dead` and `deadreplies`: those indexed threads, not each dead letter and dead reply.
    deadindex: `${base}:deadletters`,
    deadrecords: `${base}:deadletters:records`,
    deadthreads: `${base}:deadletters:threads`,
    deadclassof: `${base}:deadletters:classof`,
    deadclasses: `${base}:deadletters:classes`,
    deadreasons: `${base}:deadletters:reasons`,
    replydue: `${base}:replydue`,
    deadreplyindex: `${base}:deadreplies:items`,
    deadreplyrecords: `${base}:deadreplies:records`,
    deadreplythreads: `${base}:deadreplies:threads`,
    deadreplyclassof: `${base}:deadreplies:classof`,
    deadreplyclasses: `${base}:deadreplies:classes`,
    deadreplyreasons: `${base}:deadreplies:reasons`,
    deadevicted: `${base}:dead:evicted`,
    paused: `${base}:paused`,
    activity: `${base}:activity`,
    receiptids: `${base}:receiptids`,
    receiptidsage: `${base}:receiptids:age`,
    sweepLock: `${base}:sweeper`,
  };
}

export function threadKeys(prefix: string, buckets: number, thread: string): ThreadKeys {
  const member = encodeThread(thread);
  const bucket = bucketOf(thread, buckets);
  const shared = bucketKeys(prefix, bucket);
  const base = `${prefix}:{b${bucket}}:t:${member}`;
  // The bucket's keys are copied by name: spreading them made V8 build a dictionary-mode object, which
  // cost 30 µs per key set and slowed every lookup of a key by name.
  return {
    bucket,
    sched: shared.sched,
    run: shared.run,
    batchseq: shared.batchseq,
    deadindex: shared.deadindex,
    deadrecords: shared.deadrecords,
    deadthreads: shared.deadthreads,
    deadclassof: shared.deadclassof,
    deadclasses: shared.deadclasses,
    deadreasons: shared.deadreasons,
    replydue: shared.replydue,
    deadreplyindex: shared.deadreplyindex,
    deadreplyrecords: shared.deadreplyrecords,
    deadreplythreads: shared.deadreplythreads,
    deadreplyclassof: shared.deadreplyclassof,
    deadreplyclasses: shared.deadreplyclasses,
    deadreplyreasons: shared.deadreplyreasons,
    deadevicted: shared.deadevicted,
    paused: shared.paused,
    activity: shared.activity,
    receiptids: shared.receiptids,
    receiptidsage: shared.receiptidsage,
    sweepLock: shared.sweepLock,
    thread,
    member,
    state: `${base}:state`,
    inbox: `${base}:inbox`,
    // Not `history`: that key held a list of records without bodies; a stream also trims by age.
    history: `${base}:batches`,
    dead: `${base}:dead`,
    session: `${base}:session`,
    gate: `${base}:gate`,
    parent: `${base}:parent`,
    // Not `dedup`: keys under `dedup:` were one string per idempotency key.
    dedup: `${base}:seen`,
    dedupUntil: `${base}:seen:until`,
    replies: `${base}:replies`,
    replyLock: `${base}:replies:lock`,
    deadReplies: `${base}:deadreplies`,
    postedParts: (replyId) => `${base}:parts:${encodeURIComponent(replyId)}`,
    receipts: `${base}:receipts`,
    receiptOrder: `${base}:receipts:order`,
  };
}

/** The two sets an operator handles by hand: dead letters and dead replies. */
export type DeadKind = 'letters' | 'replies';

/** One dead set of a bucket, under the names the scripts serving both kinds read (dead-trim, dead-migrate). */
export interface DeadSetKeys {
  readonly index: string;
  readonly records: string;
  readonly threads: string;
  readonly classof: string;
  readonly classes: string;
  readonly evicted: string;
}

export function deadSetKeys(keys: BucketKeys, kind: DeadKind): DeadSetKeys {
  const letters = kind === 'letters';
  return {
    index: letters ? keys.deadindex : keys.deadreplyindex,
    records: letters ? keys.deadrecords : keys.deadreplyrecords,
    threads: letters ? keys.deadthreads : keys.deadreplythreads,
    classof: letters ? keys.deadclassof : keys.deadreplyclassof,
    classes: letters ? keys.deadclasses : keys.deadreplyclasses,
    evicted: keys.deadevicted,
  };
}

/** A thread's dead set with where the previous layout kept its items: its list and the raw reason counts. */
export function threadDeadKeys(
  keys: ThreadKeys,
  kind: DeadKind,
): DeadSetKeys & { legacy: string; legacyReasons: string } {
  const letters = kind === 'letters';
  return {
    ...deadSetKeys(keys, kind),
    legacy: letters ? keys.dead : keys.deadReplies,
    legacyReasons: letters ? keys.deadreasons : keys.deadreplyreasons,
  };
}

/**
 * An idempotency key as the thread's dedup window holds it. Most platforms' keys start with the thread
 * id; the part the key shares with it is replaced by that part's length, which the thread determines,
 * so within one thread the result is still injective. A prefix never ends inside a surrogate pair, so
 * the rest stays well-formed and its UTF-8 injective too.
 */
export function dedupMember(thread: string, idempotencyKey: string): string {
  if (!idempotencyKey.isWellFormed())
    throw new TypeError('idempotency key must be a well-formed UTF-16 string');
  const most = Math.min(thread.length, idempotencyKey.length);
  let shared = 0;
  while (shared < most && thread.charCodeAt(shared) === idempotencyKey.charCodeAt(shared)) shared++;
  if (shared > 0 && isHighSurrogate(idempotencyKey.charCodeAt(shared - 1))) shared--;
  return `${shared}:${idempotencyKey.slice(shared)}`;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** Keys of one worker for session affinity; they share the worker's own hash tag. */
export interface WorkerKeys {
  /** The worker's announcement to ringers (PRESENCE in worker-presence.ts); expires unless refreshed. */
  readonly presence: string;
  /**
   * Agent processes of this (dead or revoked) worker that its warden could not kill, as JSON, expiring
   * unless the warden refreshes it: while it exists no sweeper takes the worker's threads over.
   */
  readonly survivors: string;
  /** Doorbells handed to this worker directly (a list it pops). */
  readonly doorbells: string;
  /** What the worker runs and holds (threads, sessions, agent processes), as it last reported; expires. */
  readonly status: string;
  /** Set by an operator: the worker stops taking doorbells and hands its threads back. */
  readonly drain: string;
}

export function workerKeys(prefix: string, owner: string): WorkerKeys {
  const base = `${prefix}:{w${encodeURIComponent(owner)}}`;
  return {
    presence: `${base}:presence`,
    survivors: `${base}:survivors`,
    doorbells: `${base}:doorbells`,
    status: `${base}:status`,
    drain: `${base}:drain`,
  };
}

/** Keys of the fleet as a whole, each on a hash tag of its own. */
export interface FleetKeys {
  /** Workers by when they last reported (a sorted set of owners). */
  readonly workers: string;
  /** Workers with a turn slot to spare, by when they last said so (SpareCapacity). */
  readonly spare: string;
  /** The operators' audit log: a stream of actions, each written before it is done, trimmed to a bound. */
  readonly audit: string;
  /** How each action of the log ended, by its entry's id, and those ids in the order they ended. */
  readonly auditOutcomes: string;
  readonly auditOutcomeOrder: string;
  /** Where the result of an admin action sent with an idempotency key is kept for its replays. */
  idempotency(digest: string): string;
}

export function fleetKeys(prefix: string): FleetKeys {
  return {
    workers: `${prefix}:{fleet}:workers`,
    spare: `${prefix}:{fleet}:spare`,
    audit: `${prefix}:{audit}:log`,
    auditOutcomes: `${prefix}:{audit}:outcomes`,
    auditOutcomeOrder: `${prefix}:{audit}:outcomes:order`,
    idempotency: (digest) => `${prefix}:{audit}:idem:${digest}`,
  };
}
