export type { Batch, BatchRecord, BatchType, DeadLetter, Lease, Origin, QueuedMessage } from './batch.js';
export { type ControlMessage, ControlSubscriber, publishControl } from './control-channel.js';
export { BullDoorbell, type Doorbell, type DoorbellData, doorbellJobId } from './doorbells.js';
export { BacklogFullError, LeaseLostError, QueueError, UnsafeRedisError } from './errors.js';
export { type HeartbeatVerdict, heartbeatVerdict, type RenewResult } from './lease-policy.js';
export { type QueueLogger, silentLogger } from './logger.js';
export { type QueueConfig, queueConfig, queueDefaults } from './queue-config.js';
export { checkRedisSafety, type RedisSafetyReport } from './redis-safety.js';
export { Sweeper, type SweepReport } from './sweeper.js';
export { bucketOf, decodeThread, encodeThread, type ThreadKeys, threadKeys } from './thread-keys.js';
export {
  type ClaimResult,
  type EnqueueResult,
  type NewMessage,
  type NextStep,
  ThreadQueue,
  type ThreadState,
} from './thread-queue.js';
export {
  FinalTurnError,
  TurnAbortedError,
  type TurnHandler,
  TurnRunner,
  type TurnRunnerOptions,
} from './turn-runner.js';
