export { ConfigError } from './config-error.js';
export { type Env, splitCommandLine } from './env-readers.js';
export {
  loadWorkerConfig,
  type ProcessingMode,
  type WorkerConfig,
} from './load-config.js';
