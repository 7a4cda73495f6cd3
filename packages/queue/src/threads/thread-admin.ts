import type { BatchRecord, DeadLetter } from '../batch.js';
import type { ThreadQueue, ThreadState } from '../thread-queue.js';
import type { MessageReceipt, MessageReceipts } from './message-receipts.js';
import type { DeadReply, PendingReply, ReplyOutbox } from './reply-outbox.js';
import type { SessionRecord, SessionRecords } from './session-records.js';

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

/**
 * The operator's view and levers of one thread (the admin API): read it, pause and resume it, re-drive
 * or discard its dead letters and dead replies.
 */
export class ThreadAdmin {
  constructor(
    private readonly queue: ThreadQueue,
    private readonly sessions: SessionRecords,
    private readonly replies: ReplyOutbox,
    private readonly receipts: MessageReceipts,
  ) {}

  /** Where a platform message of the thread went; null when the thread keeps no receipt of it. */
  receipt(thread: string, messageId: string): Promise<MessageReceipt | null> {
    return this.receipts.receipt(thread, messageId);
  }

  /** Whether Redis holds anything of the thread (its state, history, dead letters, replies). */
  known(thread: string): Promise<boolean> {
    return this.queue.exists(thread);
  }

  /** Undefined when Redis holds nothing of the thread (never seen, or expired). */
  async report(thread: string): Promise<ThreadReport | undefined> {
    if (!(await this.queue.exists(thread))) return undefined;
    const [state, history, deadLetters, session, pendingReplies, deadReplies] = await Promise.all([
      this.queue.state(thread),
      this.queue.history(thread),
      this.queue.deadLetters(thread),
      this.sessions.get(thread),
      this.replies.pending(thread),
      this.replies.dead(thread),
    ]);
    return { thread, state, session: session ?? null, history, deadLetters, pendingReplies, deadReplies };
  }

  /** False when Redis knows nothing of the thread. */
  pause(thread: string): Promise<boolean> {
    return this.queue.pause(thread);
  }

  /** False when Redis knows nothing of the thread. */
  resume(thread: string): Promise<boolean> {
    return this.queue.resume(thread);
  }

  /** Puts a dead reply back in its thread's outbox; false when there is no such dead reply. */
  redriveReply(thread: string, id: string): Promise<boolean> {
    return this.replies.redrive(thread, id);
  }

  /** Drops a dead reply for good; false when there is no such dead reply. */
  discardReply(thread: string, id: string): Promise<boolean> {
    return this.replies.discard(thread, id);
  }

  /** Puts a dead letter's messages back in the inbox; how many (0: no such dead letter). */
  redrive(thread: string, batchId: string): Promise<number> {
    return this.queue.redrive(thread, batchId);
  }

  /** Drops a dead letter for good; how many messages it held, undefined when there is none. */
  discard(thread: string, batchId: string): Promise<number | undefined> {
    return this.queue.discard(thread, batchId);
  }
}
