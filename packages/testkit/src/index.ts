export { freePort } from './free-port.js';
export { deletePrefix, uniquePrefix } from './namespace.js';
export { type RedisHandle, type StartRedisOptions, startRedis } from './redis-server.js';
export { type WaitOptions, waitFor } from './wait-for.js';
