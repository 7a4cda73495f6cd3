export type {
  Batch,
  BatchRecord,
  BatchStatus,
  BatchType,
  DeadLetter,
  Lease,
  Origin,
  QueuedMessage,
  StoredMessage,
  TurnReport,
} from './batch.js';
export { type ControlMessage, ControlSubscriber, publishControl } from './control-channel.js';
export {
  BullDoorbell,
  type Doorbell,
  type DoorbellData,
  doorbellJobId,
  type RingOptions,
} from './doorbells.js';
export { BacklogFullError, LeaseLostError, QueueError, UnsafeRedisError } from './errors.js';
export { type FleetStats, readFleetStats } from './fleet-stats.js';
export { type HeartbeatVerdict, heartbeatVerdict, type RenewResult } from './lease-policy.js';
export { type QueueLogger, silentLogger } from './logger.js';
export { type ProcessingMode, type QueueConfig, queueConfig, queueDefaults } from './queue-config.js';
export { checkRedisSafety, type RedisSafetyReport } from './redis-safety.js';
export { Sweeper, type SweepReport } from './sweeper.js';
export {
  bucketOf,
  decodeThread,
  encodeThread,
  type ThreadKeys,
  threadKeys,
  type WorkerKeys,
  workerKeys,
} from './thread-keys.js';
export { ThreadParentStore } from './thread-parent-store.js';
export {
  type ClaimResult,
  type EnqueueResult,
  type NewMessage,
  type NextStep,
  ThreadQueue,
  type ThreadState,
} from './thread-queue.js';
export {
  type BatchOutcome,
  FinalTurnError,
  type RunnerEvents,
  TurnAbortedError,
  type TurnHandler,
  TurnRunner,
  type TurnRunnerOptions,
} from './turn-runner.js';
