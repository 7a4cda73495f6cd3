import { expect, it } from 'vitest';
import { PoolClosedError } from '../src/index.js';
import { recordingLogger, startPool } from './support.js';

/** The most agent processes between spawn and their `initialize` answer at once, read off the log. */
function peakStarting(records: { message: string; fields: Record<string, unknown> }[]): number {
  let starting = 0;
  let peak = 0;
  for (const { message } of records) {
    if (message === 'agent process started') peak = Math.max(peak, ++starting);
    if (message === 'agent initialized') starting--;
  }
  return peak;
}

it('starts at most startConcurrency agents at once; the rest wait in order and each says how long', async () => {
  const { logger, records } = recordingLogger();
  const waits: number[] = [];
  const { pool } = await startPool({
    logger,
    maxSessions: 8,
    warmSpares: 0,
    startConcurrency: 2,
    onAgentStartWaited: (ms) => waits.push(ms),
  });
  const threads = Array.from({ length: 8 }, (_, i) => `t${i}`);
  const opened = await Promise.all(threads.map((thread) => pool.open(thread)));

  expect(new Set(opened.map((session) => session.sessionId)).size).toBe(8);
  expect(records.filter((r) => r.message === 'agent initialized')).toHaveLength(8);
  expect(peakStarting(records)).toBe(2);
  expect(waits).toHaveLength(8);
  // The first two begin at once; every later one waited for a whole start before it, in order.
  const first = Math.max(...waits.slice(0, 2));
  expect(waits.slice(2).every((ms) => ms > first)).toBe(true);
  expect(waits.at(-1)).toBeGreaterThan(waits[2]!);
  expect(pool.startsWaiting).toBe(0);
  expect(pool.startsRunning).toBe(0);
});

it('counts waiting starts, and refuses them without spawning anything when the pool closes', async () => {
  const { logger, records } = recordingLogger();
  const { pool } = await startPool({ logger, maxSessions: 6, warmSpares: 0, startConcurrency: 1 });
  const opening = ['a', 'b', 'c', 'd'].map((thread) => pool.open(thread).catch((error: unknown) => error));
  await new Promise((resolve) => setImmediate(resolve));
  expect(pool.startsRunning).toBe(1);
  expect(pool.startsWaiting).toBe(3);

  await pool.close();
  const outcomes = await Promise.all(opening);
  // The one under way when the pool closed is killed; the three waiting never spawn.
  expect(outcomes.every((outcome) => outcome instanceof PoolClosedError)).toBe(true);
  expect(records.filter((r) => r.message === 'agent process started').length).toBeLessThanOrEqual(1);
  expect(pool.startsWaiting).toBe(0);
});
