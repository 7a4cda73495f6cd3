import { ok } from './decoders.js';
import { defineScript } from './scripts.js';

/**
 * The scripts that serve both dead sets, dead letters and dead replies (lib/dead.lua's dead_set): their keys
 * by generic names (thread-keys.ts's deadSetKeys), the set named by the `kind` argument.
 */

/** How long a dead letter or dead reply is kept, and how many one thread and one bucket keep. */
export const DEAD_BOUNDS = ['deadTtlMs', 'deadMaxPerThread', 'deadMaxPerBucket'] as const;
const SET_KEYS = ['index', 'records', 'threads', 'classof', 'classes'] as const;

/** What one trim of a bucket's set dropped, and whether its limit left some (dead-trim-6.lua). */
export interface Trimmed {
  ttl: number;
  cap: number;
  more: boolean;
}

export const deadTrim = defineScript({
  name: 'deadTrim',
  keys: [...SET_KEYS, 'evicted'],
  args: ['kind', ...DEAD_BOUNDS, 'limit'],
  decode(reply): Trimmed {
    ok(reply);
    return { ttl: reply.num(1), cap: reply.num(2), more: reply.num(3) === 1 };
  },
});

export const deadMigrate = defineScript({
  name: 'deadMigrate',
  keys: ['legacy', 'legacyReasons', ...SET_KEYS],
  args: ['kind', 'member'],
  decode(reply) {
    ok(reply);
  },
});

/** Evictions not reported before, by `<kind>:<cause>` (dead-report-1.lua). */
export const deadReport = defineScript({
  name: 'deadReport',
  keys: ['evicted'],
  args: [],
  decode(reply): Map<string, number> {
    ok(reply);
    const counts = new Map<string, number>();
    for (let at = 1; at < reply.length; at += 2) counts.set(reply.str(at), reply.num(at + 1));
    return counts;
  },
});

export const DEAD_SCRIPTS = [deadTrim, deadMigrate, deadReport];
