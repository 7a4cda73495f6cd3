export { checkSpokenAcpVersion, runAcpVersionEnv } from './acp-version.js';
export * from './fake-platform-api/index.js';
export { freePort } from './free-port.js';
export { deletePrefix, uniquePrefix } from './namespace.js';
export { redisClockReaches, redisTime } from './redis-clock.js';
export {
  type ClusterNode,
  type RedisClusterHandle,
  type StartRedisClusterOptions,
  startRedisCluster,
} from './redis-cluster.js';
export type { RedisHandle } from './redis-handle.js';
export { redisAnswers } from './redis-process.js';
export { hasRedisServer, type StartRedisOptions, startRedis } from './redis-server.js';
export { type WaitOptions, waitFor } from './wait-for.js';
