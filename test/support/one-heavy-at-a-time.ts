// Set up before every test file (vitest.config.ts): a heavy suite (heavy-suites.ts) waits until no
// other one runs, across the test run's worker processes, and lets the next go when it is done.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';
import { afterAll, beforeAll } from 'vitest';
import { heavySuite } from './heavy-suites.js';

/** Shared by every test run on the machine: two runs' heavy suites take turns too. */
const LOCK = join(tmpdir(), 'tributary-heavy-suites');
/** A holder that died (a killed worker) lets the others go after this long without refreshing the lock. */
const STALE_MS = 30_000;
/** The longest a heavy suite may wait its turn: every other heavy suite, at their longest. */
const TURN_WAIT_MS = 30 * 60_000;

let release: (() => Promise<void>) | undefined;

// biome-ignore lint/correctness/noEmptyPattern: vitest reads fixtures from the first parameter's pattern, which must be one; the suite comes second.
beforeAll(async ({}, suite) => {
  if (!heavySuite(suite.file.filepath)) return;
  release = await lockfile.lock(LOCK, {
    realpath: false,
    stale: STALE_MS,
    retries: { forever: true, minTimeout: 200, maxTimeout: 1_000 },
  });
}, TURN_WAIT_MS);

afterAll(async () => {
  await release?.();
  release = undefined;
});
