import type { BatchRecord, DeadLetter, ThreadState } from '../batch.js';
import * as script from '../lua/queue-calls.js';
import type { BatchHistory } from '../stores/batch-history.js';
import type { DeadSets } from '../stores/dead-sets.js';
import type { MessageReceipt, MessageReceipts } from '../stores/message-receipts.js';
import type { DeadReply, PendingReply, ReplyOutbox } from '../stores/reply-outbox.js';
import type { SessionRecord, SessionRecords } from '../stores/session-records.js';
import type { ThreadScripts } from './thread-scripts.js';

/** Everything an operator sees of one thread. */
export interface ThreadReport {
  thread: string;
  state: ThreadState;
  session: SessionRecord | null;
  history: BatchRecord[];
  deadLetters: DeadLetter[];
  /** Committed replies not yet delivered (a platform outage), oldest first. */
  pendingReplies: PendingReply[];
  deadReplies: DeadReply[];
}

/** The stores an operator's view of a thread reads besides its state. */
export interface ThreadAdminStores {
  history: BatchHistory;
  dead: DeadSets;
  sessions: SessionRecords;
  replies: ReplyOutbox;
  receipts: MessageReceipts;
}

/**
 * The operator's side of the thread state machine (the admin API): read a thread, pause and resume it,
 * re-drive or discard its dead letters and dead replies.
 */
export class ThreadAdmin {
  constructor(
    private readonly threads: ThreadScripts,
    private readonly stores: ThreadAdminStores,
  ) {}

  async state(thread: string): Promise<ThreadState> {
    const k = this.threads.keys(thread);
    const { redis } = this.threads;
    const [fields, backlog] = await Promise.all([redis.hgetall(k.state), redis.xlen(k.inbox)]);
    return {
      status: (fields.status as ThreadState['status'] | undefined) ?? 'idle',
      batchId: fields.status === 'running' ? (fields.batch ?? null) : null,
      claimedAt: fields.claimed ? Number(fields.claimed) : null,
      epoch: Number(fields.epoch ?? 0),
      fence: Number(fields.fence ?? 0),
      owner: fields.owner ?? null,
      leaseExpiresAt: fields.lease ? Number(fields.lease) : null,
      paused: fields.paused === '1',
      generation: Number(fields.generation ?? 0),
      backlog,
    };
  }

  /** Records of ended batches (every status), newest first. */
  history(thread: string, limit?: number): Promise<BatchRecord[]> {
    return this.stores.history.of(thread, limit);
  }

  /** The thread's dead letters, oldest first. */
  async deadLetters(thread: string): Promise<DeadLetter[]> {
    return (await this.stores.dead.ofThread(thread, 'letters')) as unknown as DeadLetter[];
  }

  /**
   * Whether Redis holds anything of the thread an operator could look at: its state, dead letters,
   * history, pending or dead replies (dead letters and dead replies outlive an idle thread's state).
   */
  async known(thread: string): Promise<boolean> {
    const k = this.threads.keys(thread);
    return (
      (await this.threads.redis.exists(k.state, k.history, k.replies)) > 0 || this.stores.dead.holds(thread)
    );
  }

  /** Undefined when Redis holds nothing of the thread (never seen, or expired). */
  async report(thread: string): Promise<ThreadReport | undefined> {
    if (!(await this.known(thread))) return undefined;
    const { sessions, replies } = this.stores;
    const [state, history, deadLetters, session, pendingReplies, deadReplies] = await Promise.all([
      this.state(thread),
      this.history(thread),
      this.deadLetters(thread),
      sessions.get(thread),
      replies.pending(thread),
      replies.dead(thread),
    ]);
    return { thread, state, session: session ?? null, history, deadLetters, pendingReplies, deadReplies };
  }

  /** Where a platform message of the thread went; null when the thread keeps no receipt of it. */
  receipt(thread: string, messageId: string): Promise<MessageReceipt | null> {
    return this.stores.receipts.receipt(thread, messageId);
  }

  /** Starts no new turn until `resume`; false when Redis knows nothing of the thread (nothing is created). */
  async pause(thread: string): Promise<boolean> {
    const k = this.threads.keys(thread);
    return (await this.threads.scripts.run(script.pause, k, { member: k.member })) === 'ok';
  }

  /** Lifts a pause, ringing the thread when messages wait; false when Redis knows nothing of it. */
  async resume(thread: string): Promise<boolean> {
    const k = this.threads.keys(thread);
    const reply = await this.threads.scripts.run(script.resume, k, { member: k.member });
    if (reply === 'notFound') return false;
    if (reply.status === 'ring') await this.threads.ring(k, reply.epoch);
    return true;
  }

  /** Puts a dead letter's messages back in the inbox; how many (0: no such dead letter). */
  async redrive(thread: string, batchId: string): Promise<number> {
    const k = this.threads.keys(thread);
    const reply = await this.threads.scripts.run(script.redrive, k, { member: k.member, batchId });
    if (reply.status === 'notFound') return 0;
    if (reply.status === 'ring') await this.threads.ring(k, reply.epoch);
    return reply.count;
  }

  /** Drops a dead letter for good; how many messages it held, undefined when there is none. */
  async discard(thread: string, batchId: string): Promise<number | undefined> {
    const k = this.threads.keys(thread);
    const reply = await this.threads.scripts.run(script.discard, k, { member: k.member, batchId });
    return reply === 'notFound' ? undefined : reply;
  }

  /** Puts a dead reply back in its thread's outbox; false when there is no such dead reply. */
  redriveReply(thread: string, id: string): Promise<boolean> {
    return this.stores.replies.redrive(thread, id);
  }

  /** Drops a dead reply for good; false when there is no such dead reply. */
  discardReply(thread: string, id: string): Promise<boolean> {
    return this.stores.replies.discard(thread, id);
  }
}
