import { type ThreadKeys, threadKeys } from '../thread-keys.js';

/** How a store finds a thread's keys (bound to the queue's prefix and bucket count). */
export type KeysOf = (thread: string) => ThreadKeys;

/** Threads whose key sets are remembered before the map starts over (a bound on memory). */
const RECENT_KEYS = 10_000;

/**
 * Thread keys under `prefix`, remembered for recent threads: building a key set (encoding, hashing)
 * cost a message more than its script.
 */
export function recentKeysOf(prefix: string, buckets: number): KeysOf {
  const recent = new Map<string, ThreadKeys>();
  return (thread) => {
    let keys = recent.get(thread);
    if (!keys) {
      keys = threadKeys(prefix, buckets, thread);
      if (recent.size >= RECENT_KEYS) recent.clear();
      recent.set(thread, keys);
    }
    return keys;
  };
}
