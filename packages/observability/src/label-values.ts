// The closed sets of label values. Keeping them closed keeps every metric's series count bounded: a label
// whose values come from user input (thread, user, channel) would create a series per conversation.

/** How a turn ended: the ACP stop reasons plus the ways the worker ends a turn itself. */
export const STOP_REASONS = [
  'end_turn',
  'cancelled',
  'max_tokens',
  'refusal',
  'timeout',
  'error',
  // The agent did not start: the batch waits for one, uncounted (docs/adr/0041).
  'not_started',
  'lease_lost',
  'shutdown',
] as const;
export type StopReason = (typeof STOP_REASONS)[number];

/** What ingress did with one webhook request. */
export const INGRESS_OUTCOMES = [
  'accepted',
  'duplicate',
  // An edit or delete applied to a waiting message; a delete of a dispatched one, recorded.
  'edited',
  'deleted',
  'ignored',
  'control',
  // A click on a button of a permission request, whatever became of it.
  'approval',
  'handshake',
  'unauthorized',
  'invalid',
  'refused',
  'unavailable',
  'error',
] as const;
export type IngressOutcome = (typeof INGRESS_OUTCOMES)[number];

/**
 * Why ingress refused a message: `backlog_full` and `rate_limited` before acknowledging it (the platform
 * retries it); `gate`, and `edit` (an edit that made a message a command), for good.
 */
export const REFUSAL_REASONS = ['backlog_full', 'rate_limited', 'gate', 'edit'] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

/**
 * Why a message that arrived during a turn was not steered into it and waits for the next turn
 * (docs/adr/0040): the turn had ended, the agent does not steer, the agent refused it, or the batch was
 * at its caps.
 */
export const STEER_REFUSAL_REASONS = ['turn_ended', 'unsupported', 'failed', 'batch_full'] as const;
export type SteerRefusalReason = (typeof STEER_REFUSAL_REASONS)[number];

/** What made the sweeper hand a thread back to the doorbell queue. */
export const REVIVAL_REASONS = ['lease', 'doorbell', 'owner_gone'] as const;
export type RevivalReason = (typeof REVIVAL_REASONS)[number];

/** What became of an attempt to deliver a committed reply. */
export const REPLY_OUTCOMES = ['delivered', 'retried', 'dead'] as const;
export type ReplyOutcome = (typeof REPLY_OUTCOMES)[number];

/** What became of a dispatched batch; `deferred`: put back because its agent did not start. */
export const TURN_OUTCOMES = ['committed', 'failed', 'deferred', 'dead_lettered', 'abandoned'] as const;
export type TurnOutcome = (typeof TURN_OUTCOMES)[number];

/** The two sets an operator handles by hand: dead letters and dead replies. */
export const DEAD_KINDS = ['letters', 'replies'] as const;
export type DeadKind = (typeof DEAD_KINDS)[number];

/** Why a dead letter or dead reply was dropped unhandled: older than its TTL, or past a cap. */
export const EVICTION_CAUSES = ['ttl', 'cap'] as const;
export type EvictionCause = (typeof EVICTION_CAUSES)[number];

/** The BullMQ job states the doorbell queue reports. */
export const BULLMQ_JOB_STATES = ['waiting', 'active', 'delayed', 'completed', 'failed'] as const;
export type BullmqJobState = (typeof BULLMQ_JOB_STATES)[number];

/** The `status` label of platform API calls: the HTTP status code, '0' when no answer came. */
export function apiStatusLabel(httpStatus: number | undefined): string {
  return String(httpStatus ?? 0);
}
