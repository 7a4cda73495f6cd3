export type {
  AnsweredSession,
  Batch,
  BatchRecord,
  BatchStatus,
  BatchType,
  DeadLetter,
  Lease,
  Origin,
  Outbound,
  QueuedMessage,
  StoredMessage,
  ThreadState,
  TurnReport,
} from './batch.js';
export { type ConnectionProfile, openConnection, type RedisClient } from './connections.js';
export {
  BacklogFullError,
  LeaseLostError,
  QueueError,
  RedisTopologyError,
  ReplicationLagError,
  UnsafeRedisError,
} from './errors.js';
export type { FleetStats, PoolStats } from './fleet-stats.js';
export { type HeartbeatVerdict, heartbeatVerdict, type RenewResult } from './lease-policy.js';
export type { TurnSlot } from './lua/turn-limit-calls.js';
export type { PostedParts } from './posted-parts.js';
export {
  DEFAULT_POOL,
  type ProcessingMode,
  type QueueConfig,
  queueConfig,
  queueDefaults,
  type ThreadBatching,
} from './queue-config.js';
export type { RedisSafetyReport } from './redis-safety.js';
export { isRedisUnavailable } from './redis-unavailable.js';
export type { DeliveryOptions, DeliveryOutcome } from './reply-loop.js';
export type { ReplyRetryPolicy } from './reply-retry-policy.js';
export type { ReplyAttempt, ReplySink } from './reply-sink.js';
export {
  type DeliveryTuning,
  newOwnerId,
  Runner,
  type RunnerEvents,
  type RunnerOptions,
} from './runner.js';
export { Store, type StoreOptions } from './store.js';
export type {
  Approval,
  ApprovalOption,
  ApprovalRequest,
  ApprovalState,
  Approvals,
} from './stores/approvals.js';
export type {
  AuditCompletion,
  AuditEntry,
  AuditIntent,
  AuditLog,
  AuditOutcome,
  IdempotencyClaim,
  StoredAnswer,
} from './stores/audit-log.js';
export { isStreamId } from './stores/audit-log.js';
export {
  BadCursorError,
  type DeadLetterRow,
  type DeadReplyRow,
  type FleetListing,
  type FleetSummary,
  type Page,
  THREAD_LIST_STATES,
  type ThreadListState,
  type ThreadRow,
} from './stores/fleet-listing.js';
export type { FleetPace } from './stores/fleet-pace.js';
export type { GateState, ThreadGateState } from './stores/gate-state.js';
export type { BatchPlace, EntryPlace, MessageReceipt } from './stores/message-receipts.js';
export type { RecentThreads } from './stores/recent-threads.js';
export type {
  DeadReply,
  Done,
  PendingReply,
  PostedPart,
  ReplyOutbox,
  Take,
  TakenReply,
} from './stores/reply-outbox.js';
export {
  type RouteBudget,
  type RouteDay,
  type RouteUsage,
  type SpentUsage,
  USAGE_DAYS_KEPT,
  usageDay,
} from './stores/route-usage.js';
export type { SessionRecord, SessionRecords } from './stores/session-records.js';
export type { ControlSubscription, ThreadControls } from './stores/thread-controls.js';
export type { ThreadParentStore } from './stores/thread-parents.js';
export type { ThreadRoutes } from './stores/thread-routes.js';
export type { TurnLimits } from './stores/turn-limits.js';
export { takingWorkersByPool, type WorkerRegistry, type WorkerStatus } from './stores/worker-registry.js';
export type { SweepReport } from './sweeper.js';
export type { ThreadAdmin, ThreadReport } from './threads/thread-admin.js';
export type {
  EnqueueResult,
  GateConditions,
  NewMessage,
  Revision,
  RevisionResult,
  ThreadIntake,
} from './threads/thread-intake.js';
export { type ThreadQueue, threadQueue } from './threads/thread-queue.js';
export type { ThreadSweep } from './threads/thread-sweep.js';
export type {
  ClaimResult,
  DeferOptions,
  DeferredBatch,
  NextStep,
  ThreadTurns,
} from './threads/thread-turns.js';
export {
  type BatchOutcome,
  FinalTurnError,
  TurnAbortedError,
  TurnFailedError,
  type TurnHandler,
  TurnNotStartedError,
} from './turn-loop.js';
export { type ConsumerTiming, DEFAULT_CONSUMER_TIMING } from './wake/consumer-watch.js';
export {
  BullDoorbell,
  type Doorbell,
  type DoorbellData,
  doorbellJobId,
  type RingOptions,
} from './wake/doorbell.js';
export { ROUTE_WAIT_NOTICE_MS, type RouteLines } from './wake/route-lines.js';
export { PRESENCE, type Presence } from './worker-presence.js';
