export { type AgentIsolation, agentIsolation, localSandbox } from './agents/agent-isolation.js';
export { agentCommandConfig, authFix } from './agents/agent-setup.js';
export type { OutboundMessage, OutboundSink } from './replies/outbox.js';
export { RouteAtLimit, RouteTurnSlots } from './turns/route-turn-slots.js';
export type { TurnSignal, TurnSignalListener } from './turns/turn-signals.js';
export { type WatchdogLevel, type WatchdogLimits, watchdogVerdict } from './turns/turn-watchdog.js';
export { type RunningWorker, startWorker, type WorkerOptions } from './worker-service.js';
