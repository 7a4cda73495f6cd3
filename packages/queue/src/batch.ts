import type { ScriptReply } from './scripts.js';

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

const FIELDS_PER_ENTRY = 7;

/**
 * Parses `{code, fence, batch id, type, deliveries, lease, generation, n, entries...}` from
 * claim/commit/fail.
 */
export function parseBatchReply(thread: string, owner: string, reply: ScriptReply): Batch {
  const count = Number(reply[7]);
  const messages: QueuedMessage[] = [];
  for (let i = 0; i < count; i++) {
    const at = 8 + i * FIELDS_PER_ENTRY;
    messages.push({
      streamId: String(reply[at]),
      seq: Number(reply[at + 1]),
      id: String(reply[at + 2]),
      tokens: Number(reply[at + 3]),
      origin: String(reply[at + 4]) as Origin,
      acceptedAt: Number(reply[at + 5]),
      body: String(reply[at + 6]),
    });
  }
  return {
    id: String(reply[2]),
    type: String(reply[3]) as BatchType,
    deliveries: Number(reply[4]),
    generation: Number(reply[6]),
    lease: { thread, owner, fence: Number(reply[1]), expiresAt: Number(reply[5]) },
    messages,
  };
}

/** A committed batch as kept in the thread's history (newest first). */
export interface BatchRecord {
  batchId: string;
  thread: string;
  fence: number;
  type: BatchType;
  claimedAt: number;
  committedAt: number;
  deliveries: number;
  messages: { sid: string; seq: number; id: string }[];
}

/** A batch moved aside after too many failures; `redrive` puts its messages back in the inbox. */
export interface DeadLetter {
  batchId: string;
  thread: string;
  reason: string;
  deadAt: number;
  deliveries: number;
  failures: number;
  messages: { sid: string; seq: number; id: string; tok: number; origin: Origin; at: number; body: string }[];
}
