export { ConfigError } from './config-error.js';
export { type Env, splitCommandLine } from './env-readers.js';
export {
  loadWorkerConfig,
  type PermissionPolicyName,
  type ProcessingMode,
  type WorkerConfig,
} from './load-config.js';
