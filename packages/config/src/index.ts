export {
  type AdminRole,
  type AdminSettings,
  type AdminToken,
  DEFAULT_ADMIN_PORT,
  LOOPBACK,
} from './admin-config.js';
export { type AgentHostConfig, loadAgentHostConfig } from './agent-host-config.js';
export type { AgentSandboxSetting, ProgressDisplay, WorkspaceOnReset } from './agent-settings.js';
export { ConfigError } from './config-error.js';
export { type Env, type LogLevel, splitCommandLine } from './env-readers.js';
export { FORWARDER_REQUIRED, type ForwarderConfig, loadForwarderConfig } from './forwarder-config.js';
export {
  type BotMessagePolicy,
  DEFAULT_INGRESS_PORT,
  type GateConfig,
  type IngressConfig,
  loadIngressConfig,
  type TrustProxy,
  type UserMessagePolicy,
} from './ingress-config.js';
export { loadWorkerConfig, processingModeOf, steersOn, type WorkerConfig } from './load-config.js';
export {
  type DiscordConfig,
  type GatewayConfig,
  loadPlatformConfig,
  type PlatformConfig,
  type SlackConfig,
  type TelegramConfig,
} from './platform-config.js';
export { RouteFile, type RouteFileOptions } from './routes/route-file.js';
export {
  DEFAULT_ROUTE,
  isPoolName,
  isRouteName,
  type RoutePlace,
  type RouteProfile,
  RouteTable,
  RouteTableError,
  readThreadRoute,
  type ThreadRoute,
} from './routes/route-table.js';
export {
  DEFAULT_REDIS_URL,
  isRedisCluster,
  type ServiceSettings,
  sharedQueueOptions,
} from './service-settings.js';
export { safeSegment, threadPath } from './thread-path.js';
export { variablesRead } from './variables-read.js';
