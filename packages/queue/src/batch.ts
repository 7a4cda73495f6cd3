import type { SpentUsage } from './stores/route-usage.js';

/** Who produced a message; decides the batch type recorded in history. */
export type Origin = 'user' | 'agent' | 'system';

/** `Continuation` marks a batch delivered again after its turn did not complete (crash, hand-back, retry). */
export type BatchType = 'UserRequest' | 'AgentToAgent' | 'SystemTrigger' | 'Continuation';

export interface QueuedMessage {
  /** Inbox stream id: the acceptance order. */
  streamId: string;
  /** Per-thread sequence number, 1-based, never reused. */
  seq: number;
  /** The caller's message id. */
  id: string;
  tokens: number;
  origin: Origin;
  /** Acceptance time (Redis clock, ms). */
  acceptedAt: number;
  body: string;
}

/** Proof of ownership of a thread: every write of a turn is checked against owner and fence. */
export interface Lease {
  thread: string;
  owner: string;
  fence: number;
  expiresAt: number;
}

export interface Batch {
  /** 64-bit, time-ordered, as 16 hex digits; stable across re-deliveries of the same batch. */
  id: string;
  type: BatchType;
  /** 1 on first delivery. */
  deliveries: number;
  /** The thread's session generation when the batch was handed over; `reset` bumps it. */
  generation: number;
  lease: Lease;
  messages: QueuedMessage[];
}

/** A message as kept in history records and dead letters: the inbox entry, body included. */
export interface StoredMessage {
  sid: string;
  seq: number;
  id: string;
  tok: number;
  origin: Origin;
  /** Acceptance time (Redis clock, ms). */
  at: number;
  body: string;
  /** The sender lane the message was enqueued with ('' when none). */
  lane: string;
}

/**
 * How a batch's delivery ended. Only `complete` batches make up the conversation a fresh agent session
 * is given: `cancelled` was withdrawn by the user, `failed` will be delivered again, `dead` was
 * dead-lettered. A batch interrupted by a crash or a lost lease has no record until it ends; its final
 * record then says `type: 'Continuation'` and `deliveries` > 1.
 */
export type BatchStatus = 'complete' | 'cancelled' | 'failed' | 'dead';

/** One ended delivery of a batch, as kept in the thread's history. */
export interface BatchRecord {
  batchId: string;
  thread: string;
  fence: number;
  type: BatchType;
  status: BatchStatus;
  /** When this delivery was handed over, and when it ended (Redis clock, ms). */
  claimedAt: number;
  endedAt: number;
  deliveries: number;
  messages: StoredMessage[];
  /** The agent's reply text and stop reason (committed batches). */
  reply?: string;
  stopReason?: string;
  /** Why the turn failed (failed and dead batches). */
  reason?: string;
  /** Failed turns of this batch so far (failed batches). */
  failures?: number;
  /** The batch kept failing and was split: its messages were retried one at a time (docs/adr/0033). */
  split?: boolean;
  /** What the turn spent, where its agent reported it (committed batches; docs/adr/0059). */
  usage?: SpentUsage;
}

/**
 * A message for the thread's reply outbox, written with the batch's commit and delivered after it.
 * `id` is unique per thread (e.g. batch id and kind); `payload` is the deliverer's, opaque here.
 */
export interface Outbound {
  id: string;
  payload: string;
}

/** What a turn handler reports when its turn ended: recorded with the batch by the commit. */
export interface TurnReport {
  /** The agent's reply text, as recorded in history. */
  reply: string;
  /** The ACP stop reason; `cancelled` records the batch as cancelled rather than complete. */
  stopReason: string;
  /** The reply and notices to deliver, in order. */
  outbound?: Outbound[];
  /**
   * With steering (docs/adr/0040): the stream id of the last message the agent received in this turn.
   * Messages a steer took into the batch after it (the agent refused them) are not acknowledged.
   */
  deliveredThrough?: string;
  /** The agent session the turn was answered on, when the thread's record does not name it yet. */
  session?: AnsweredSession;
  /** What the turn spent, where its agent reported it; kept in the batch's record. */
  usage?: SpentUsage;
}

/**
 * What a turn reports of the session it was answered on; its commit records it with the lease's owner
 * and fence (commit-13.lua), so only the lease holder's record lands and it costs no call of its own.
 */
export interface AnsweredSession {
  sessionId: string;
  /** The agent command: a session id is meaningless to a different agent. */
  agent: string;
  /** The agent's working directory: a session belongs to the directory it was opened in. */
  cwd: string;
  /** The thread's session generation when it was saved; `reset` bumps it. */
  generation: number;
}

/** A thread's place in the state machine, as an operator reads it. */
export interface ThreadState {
  status: 'idle' | 'scheduled' | 'running';
  /** The batch in flight, while running. */
  batchId: string | null;
  /** When the latest batch was handed to a worker (Redis clock, ms). */
  claimedAt: number | null;
  epoch: number;
  fence: number;
  owner: string | null;
  leaseExpiresAt: number | null;
  paused: boolean;
  generation: number;
  /** Messages in the inbox: in flight plus waiting. */
  backlog: number;
}

/** A batch moved aside after too many failures; `redrive` puts its messages back in the inbox. */
export interface DeadLetter {
  batchId: string;
  thread: string;
  reason: string;
  /** The reason without its variable parts, which the dead letters are grouped by (absent: not moved yet). */
  reasonClass?: string;
  deadAt: number;
  deliveries: number;
  failures: number;
  messages: StoredMessage[];
}
