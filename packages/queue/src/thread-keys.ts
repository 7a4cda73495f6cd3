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
  /** Replies given up after the retry horizon, kept for an operator to re-drive. */
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
  /** The bucket's dead letters, one member `<thread member>/<batch id>` each, scored by when it died. */
  readonly deadindex: string;
  /** How many of the bucket's dead letters died of each reason (reason → count): the grouping by reason. */
  readonly deadreasons: string;
  /** Threads with replies to deliver, scored by when the next attempt is due. */
  readonly replydue: string;
  /** The bucket's dead replies, one member `<thread member>/<reply id>` each, scored by when it died. */
  readonly deadreplyindex: string;
  /** How many of the bucket's dead replies died of each reason. */
  readonly deadreplyreasons: string;
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
  /**
   * Doorbells of the bucket's threads for any worker to pop, pushed by the enqueue script itself so a
   * ring costs no round trip of its own (a single Redis only: a worker pops every bucket's list in one
   * BLPOP, which a Cluster refuses across slots).
   */
  readonly ready: string;
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
    deadreasons: `${base}:deadletters:reasons`,
    replydue: `${base}:replydue`,
    deadreplyindex: `${base}:deadreplies:items`,
    deadreplyreasons: `${base}:deadreplies:reasons`,
    paused: `${base}:paused`,
    activity: `${base}:activity`,
    receiptids: `${base}:receiptids`,
    receiptidsage: `${base}:receiptids:age`,
    sweepLock: `${base}:sweeper`,
    ready: `${base}:ready`,
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
    deadreasons: shared.deadreasons,
    replydue: shared.replydue,
    deadreplyindex: shared.deadreplyindex,
    deadreplyreasons: shared.deadreplyreasons,
    paused: shared.paused,
    activity: shared.activity,
    receiptids: shared.receiptids,
    receiptidsage: shared.receiptidsage,
    sweepLock: shared.sweepLock,
    ready: shared.ready,
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

/**
 * An idempotency key as the thread's dedup index holds it. Most platforms' keys start with the thread
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
  /** The operators' audit log: a stream trimmed to a bounded length. */
  readonly audit: string;
  /** Where the result of an admin action sent with an idempotency key is kept for its replays. */
  idempotency(digest: string): string;
}

export function fleetKeys(prefix: string): FleetKeys {
  return {
    workers: `${prefix}:{fleet}:workers`,
    spare: `${prefix}:{fleet}:spare`,
    audit: `${prefix}:{audit}:log`,
    idempotency: (digest) => `${prefix}:{audit}:idem:${digest}`,
  };
}
