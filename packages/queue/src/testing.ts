/**
 * The queue's key layout, for tests and benchmarks that look at Redis directly. No app needs it: every
 * read and write of these keys goes through the queue's stores and scripts (docs/adr/0011).
 */
export { bucketKeys, deadSetKeys, dedupMember, threadKeys, workerKeys } from './thread-keys.js';
