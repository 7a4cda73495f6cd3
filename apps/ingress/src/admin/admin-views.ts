import { arrivalFromBody, packBatch } from '@tributary/packing';
import {
  type AuditEntry,
  type BatchRecord,
  DEFAULT_POOL,
  type DeadLetter,
  type DeadLetterRow,
  type DeadReply,
  type DeadReplyRow,
  type PendingReply,
  type PoolStats,
  type StoredMessage,
  type ThreadReport,
  type ThreadRow,
  type WorkerStatus,
} from '@tributary/queue';

/**
 * What the admin API answers, from what the queue keeps: times as ISO-8601 (the queue keeps Redis-clock
 * milliseconds) and message bodies and reply payloads as the JSON they hold, not as strings of it.
 */

export function iso(ms: number): string;
export function iso(ms: number | null): string | null;
export function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/** A stored JSON string as its value; a string that is not JSON stays as it is. */
function json(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function messageView({ body, at, ...rest }: StoredMessage) {
  return { ...rest, at: iso(at), body: json(body) };
}

export function batchView({ claimedAt, endedAt, messages, ...rest }: BatchRecord) {
  return { ...rest, claimedAt: iso(claimedAt), endedAt: iso(endedAt), messages: messages.map(messageView) };
}

export function deadLetterView({ deadAt, messages, ...rest }: DeadLetter) {
  return { ...rest, deadAt: iso(deadAt), messages: messages.map(messageView) };
}

export function pendingReplyView({ at, payload, ...rest }: PendingReply) {
  return { ...rest, at: iso(at), payload: json(payload) };
}

export function deadReplyView({ deadAt, ...rest }: DeadReply) {
  return { ...pendingReplyView(rest), deadAt: iso(deadAt) };
}

export function threadReportView(report: ThreadReport) {
  const { state, session } = report;
  return {
    thread: report.thread,
    state: { ...state, leaseExpiresAt: iso(state.leaseExpiresAt), claimedAt: iso(state.claimedAt) },
    session: session && { ...session, savedAt: iso(session.savedAt) },
    history: report.history.map(batchView),
    deadLetters: report.deadLetters.map(deadLetterView),
    pendingReplies: report.pendingReplies.map(pendingReplyView),
    deadReplies: report.deadReplies.map(deadReplyView),
  };
}

export function threadRowView({ leaseExpiresAt, since, ...rest }: ThreadRow) {
  return { ...rest, leaseExpiresAt: iso(leaseExpiresAt), since: iso(since) };
}

export function deadLetterRowView({ deadAt, ...rest }: DeadLetterRow) {
  return { ...rest, deadAt: iso(deadAt) };
}

export function deadReplyRowView({ at, deadAt, ...rest }: DeadReplyRow) {
  return { ...rest, at: iso(at), deadAt: iso(deadAt) };
}

export function auditView({ at, completedAt, ...rest }: AuditEntry) {
  return { ...rest, at: iso(at), completedAt: iso(completedAt) };
}

export function workerView({ startedAt, reportedAt, pool, ...rest }: WorkerStatus) {
  return { ...rest, pool: pool ?? DEFAULT_POOL, startedAt: iso(startedAt), reportedAt: iso(reportedAt) };
}

/** Each worker pool's workers and threads (docs/adr/0060), the default pool first, then by name. */
export function poolsView(pools: Record<string, PoolStats>) {
  return Object.entries(pools)
    .sort(([a], [b]) => (a === DEFAULT_POOL ? -1 : b === DEFAULT_POOL ? 1 : a.localeCompare(b)))
    .map(([pool, stats]) => ({ pool, ...stats }));
}

/**
 * The prompt a batch's messages make by the packing contract (docs/adr/0003), as for an agent that
 * advertises no image or audio support: attachments appear as the links the worker would send such an
 * agent, since their bytes are only fetched when a turn runs. Undefined when a body is not an event.
 */
export function packedPrompt(messages: readonly StoredMessage[]): ReturnType<typeof packBatch> | undefined {
  try {
    return packBatch(
      messages.map((message) => arrivalFromBody(message.body)),
      {},
    );
  } catch {
    return undefined;
  }
}
