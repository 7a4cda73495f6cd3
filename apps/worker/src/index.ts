export { type AgentIsolation, agentIsolation, localSandbox } from './agent-isolation.js';
export { agentCommandConfig, authFix } from './agent-setup.js';
export type { OutboundMessage, OutboundSink } from './outbox.js';
export type { TurnSignal, TurnSignalListener } from './turn-signals.js';
export { type WatchdogLevel, type WatchdogLimits, watchdogVerdict } from './turn-watchdog.js';
export { CancelledByUser, type RunningWorker, startWorker, type WorkerOptions } from './worker-service.js';
