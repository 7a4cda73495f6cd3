import type { ThreadKeys } from '../thread-keys.js';

/** How a store finds a thread's keys (the queue's `keys`, bound to its prefix and bucket count). */
export type KeysOf = (thread: string) => ThreadKeys;
