export { CATALOGUE, METRIC_NAMES, type MetricKey } from './catalogue.js';
export { ConditionLog } from './condition-log.js';
export {
  createMetrics,
  type MetricSet,
  type Metrics,
  type MetricsOptions,
  metricsContentType,
} from './create-metrics.js';
export { type FleetReading, observeFleet } from './fleet-gauges.js';
export {
  apiStatusLabel,
  BULLMQ_JOB_STATES,
  type BullmqJobState,
  DEAD_KINDS,
  type DeadKind,
  EVICTION_CAUSES,
  type EvictionCause,
  INGRESS_OUTCOMES,
  type IngressOutcome,
  REFUSAL_REASONS,
  REPLY_OUTCOMES,
  REVIVAL_REASONS,
  type RefusalReason,
  type RevivalReason,
  STEER_REFUSAL_REASONS,
  STOP_REASONS,
  type SteerRefusalReason,
  type StopReason,
  TURN_OUTCOMES,
  type TurnOutcome,
} from './label-values.js';
export { type LogSink, silentLogger } from './log-sink.js';
export { createLogger, exitWhenWritten, REDACTED_PATHS } from './logger.js';
export type { CounterSpec, GaugeSpec, HistogramSpec, MetricSpec } from './metric-spec.js';
export { platformCallHooks } from './platform-call-counter.js';
export type { ScrapeRead } from './scrape-readers.js';
export { MIN_KNOWN_SECRET_LENGTH, SCRUBBED, SecretScrubber } from './secret-scrubber.js';
