import type { BatchRecord, DeadLetter } from '../batch.js';
import type { ThreadQueue, ThreadState } from '../thread-queue.js';
import type { SessionRecord, SessionRecords } from './session-records.js';

/** Everything an operator sees of one thread. */
export interface ThreadReport {
  thread: string;
  state: ThreadState;
  session: SessionRecord | null;
  history: BatchRecord[];
  deadLetters: DeadLetter[];
}

/** The operator's view and levers (the admin API): read a thread, list and re-drive dead letters. */
export class ThreadAdmin {
  constructor(
    private readonly queue: ThreadQueue,
    private readonly sessions: SessionRecords,
  ) {}

  async report(thread: string): Promise<ThreadReport> {
    const [state, history, deadLetters, session] = await Promise.all([
      this.queue.state(thread),
      this.queue.history(thread),
      this.queue.deadLetters(thread),
      this.sessions.get(thread),
    ]);
    return { thread, state, session: session ?? null, history, deadLetters };
  }

  threadsWithDeadLetters(): Promise<string[]> {
    return this.queue.threadsWithDeadLetters();
  }

  /** Puts a dead letter's messages back in the inbox; how many (0: no such dead letter). */
  redrive(thread: string, batchId: string): Promise<number> {
    return this.queue.redrive(thread, batchId);
  }
}
