import type { RedisClient } from '../connections.js';
import { deadBounds, type QueueConfig } from '../queue-config.js';
import { BatchHistory } from '../stores/batch-history.js';
import { DeadSets } from '../stores/dead-sets.js';
import { MessageReceipts } from '../stores/message-receipts.js';
import { ReplyOutbox } from '../stores/reply-outbox.js';
import { SessionRecords } from '../stores/session-records.js';
import type { Doorbell } from '../wake/doorbell.js';
import { ThreadAdmin } from './thread-admin.js';
import { ThreadIntake } from './thread-intake.js';
import { ThreadScripts } from './thread-scripts.js';
import { ThreadSweep } from './thread-sweep.js';
import { ThreadTurns } from './thread-turns.js';

/**
 * The per-thread queue, by caller: each part runs the transitions of the state machine (one Lua script
 * each, lua/queue-calls.ts) that its caller makes. Ingress holds `intake`, a worker's turn loop
 * `turns`, its sweeper `sweep`, the admin API `admin`; none of them reaches another's.
 */
export interface ThreadQueue {
  readonly config: Readonly<QueueConfig>;
  readonly intake: ThreadIntake;
  readonly turns: ThreadTurns;
  readonly sweep: ThreadSweep;
  readonly admin: ThreadAdmin;
  /** Readiness: every script is in Redis's cache (reloaded after a Redis restart). */
  ensureScripts(): Promise<number>;
}

/** The stores over a thread's keys that the queue's admin reads; built here when not given. */
export type ThreadQueueStores = Partial<{
  sessions: SessionRecords;
  replies: ReplyOutbox;
  history: BatchHistory;
  receipts: MessageReceipts;
}>;

/** A thread queue on `redis`, whose transitions ring `doorbell`. */
export function threadQueue(
  redis: RedisClient,
  config: Readonly<QueueConfig>,
  doorbell: Doorbell,
  stores: ThreadQueueStores = {},
): ThreadQueue {
  const threads = new ThreadScripts(redis, config, doorbell);
  const keysOf = (thread: string) => threads.keys(thread);
  const history = stores.history ?? new BatchHistory(redis, keysOf, config.historyLimit);
  const admin = new ThreadAdmin(threads, {
    history,
    dead: new DeadSets(redis, keysOf),
    sessions: stores.sessions ?? new SessionRecords(redis, keysOf),
    replies: stores.replies ?? new ReplyOutbox(redis, keysOf, deadBounds(config)),
    receipts: stores.receipts ?? new MessageReceipts(redis, keysOf, history),
  });
  return {
    config,
    intake: new ThreadIntake(threads),
    turns: new ThreadTurns(threads),
    sweep: new ThreadSweep(threads),
    admin,
    ensureScripts: () => threads.ensureLoaded(),
  };
}
