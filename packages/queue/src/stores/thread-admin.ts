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
 * The operator's view and levers (the admin API): read a thread, list and re-drive dead letters and
 * dead replies.
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

  async report(thread: string): Promise<ThreadReport> {
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

  threadsWithDeadLetters(): Promise<string[]> {
    return this.queue.threadsWithDeadLetters();
  }

  threadsWithDeadReplies(): Promise<string[]> {
    return this.replies.threadsWithDeadReplies();
  }

  /** Puts a dead reply back in its thread's outbox; false when there is no such dead reply. */
  redriveReply(thread: string, id: string): Promise<boolean> {
    return this.replies.redrive(thread, id);
  }

  /** Puts a dead letter's messages back in the inbox; how many (0: no such dead letter). */
  redrive(thread: string, batchId: string): Promise<number> {
    return this.queue.redrive(thread, batchId);
  }
}
