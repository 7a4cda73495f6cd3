export type {
  ContentBlock,
  Cost,
  McpServer,
  NewSessionResponse,
  PermissionOption,
  PermissionOptionKind,
  PlanEntry,
  RequestPermissionOutcome,
  RequestPermissionRequest,
  StopReason,
  ToolCall,
  ToolCallUpdate,
} from '@agentclientprotocol/sdk';
export { agentDefaults } from './agent-defaults.js';
export { type AgentEnvOptions, buildAgentEnv, DEFAULT_INHERITED_ENV } from './agent-env.js';
export type { AgentInfo, AuthMethodInfo } from './agent-info.js';
export {
  type AgentCommandConfig,
  type AgentExit,
  AgentProcess,
  type AgentProcessOptions,
  type ProcessWatcher,
} from './agent-process.js';
export type { StartFailures } from './agent-supervisor.js';
export {
  AcpError,
  AgentAuthError,
  AgentExitedError,
  AgentRequestError,
  AgentStartError,
  AgentStartTimeoutError,
  PoolClosedError,
  SessionCapacityError,
  SessionGoneError,
  TurnCancelTimeoutError,
  TurnInProgressError,
  UnsupportedProtocolVersionError,
} from './errors.js';
export { AgentHost, type HostIsolation } from './host/agent-host.js';
export { encodeFrame, FRAME, FrameReader } from './host/frames.js';
export { agentHostSandbox, askAgentHost } from './host/host-isolation.js';
export { remoteLauncher } from './host/remote-launcher.js';
export type { AgentLauncher, LaunchedAgent, LaunchLine } from './launch/launched-agent.js';
export { localLauncher } from './launch/local-launcher.js';
export { type NodeEntryCommand, nodeEntryCommand } from './launch/node-entry.js';
export {
  choosePermission,
  DEFAULT_PERMISSION_POLICY,
  PERMISSION_POLICIES,
  type PermissionPolicy,
  type PermissionRules,
  policyFor,
  TOOL_KINDS,
} from './permission-policy.js';
export {
  type ProtocolVersion,
  type SessionSetup,
  SUPPORTED_PROTOCOL_VERSIONS,
} from './protocol.js';
export type { AgentRooms } from './sandbox/agent-rooms.js';
export { type AgentRoom, type AgentSandbox, containerOnly, noSandbox } from './sandbox/agent-sandbox.js';
export {
  bubblewrapSandbox,
  probeBubblewrap,
  SANDBOX_HOME,
  SANDBOX_WORKSPACE,
} from './sandbox/bubblewrap.js';
export { applySessionMode, type ModeOutcome } from './session-mode.js';
export {
  type OpenedSession,
  type SessionPath,
  SessionPool,
  type SessionPoolOptions,
} from './session-pool.js';
export type { LateUpdate, PermissionAsker } from './session-router.js';
export type { SteerOutcome, SteerRefusal } from './steering.js';
export type { TurnOptions, TurnResult } from './turn.js';
export type { TurnEvent } from './turn-events.js';
export type { TurnUsage } from './turn-usage.js';
