import { expect, it } from 'vitest';
import { recordingLogger, startPool, text, waitFor } from './support.js';

const starts = (records: { message: string }[]) =>
  records.filter((record) => record.message === 'agent process started').length;

it('hands a new thread a warm spare, so opening its session starts no process, and refills it', async () => {
  const { logger, records } = recordingLogger();
  const { pool } = await startPool({ warmSpares: 1, logger });
  pool.warm();
  await waitFor(() => pool.readySpares === 1, 'the spare to be ready');
  expect(starts(records)).toBe(1);
  const spare = records.find((record) => record.message === 'agent process started')!.fields.pid;

  await pool.open('a');
  // The spare carried the session; its replacement starts in the background.
  expect(pool.pidOf('a')).toBe(spare);
  await waitFor(() => pool.readySpares === 1, 'the replacement spare');
  expect(starts(records)).toBe(2);
  expect(pool.liveProcesses).toBe(2);
});

it('keeps a spare ready at the session cap, so the next new thread still takes one', async () => {
  const { logger, records } = recordingLogger();
  const { pool } = await startPool({ maxSessions: 2, warmSpares: 1, logger });
  pool.warm();
  await pool.open('a');
  await pool.open('b');
  // Both sessions in place: the third process the cap allows is a spare again.
  await waitFor(() => pool.readySpares === 1, 'a spare at the cap');
  const holding = [pool.pidOf('a'), pool.pidOf('b')];
  const others = records
    .filter((r) => r.message === 'agent process started')
    .map((r) => r.fields.pid)
    .filter((pid) => !holding.includes(pid as number));
  await pool.open('c');
  // The new thread went to a process that was already running: the spare, not a fresh start.
  expect(others).toContain(pool.pidOf('c'));
});

it('keeps sessions, spares, starting and stopping processes together under maxSessions + warmSpares', async () => {
  const { pool } = await startPool({ maxSessions: 2, warmSpares: 1 });
  pool.warm();
  let peak = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, pool.liveProcesses);
  }, 1);
  try {
    for (let round = 0; round < 3; round++) {
      // More threads than sessions: every open past the second evicts one, whose process must be gone
      // before another starts.
      await Promise.all(
        ['a', 'b', 'c', 'd', 'e'].map((thread) =>
          pool.runTurn(`${thread}${round}`, [text('hi')]).catch(() => undefined),
        ),
      );
    }
  } finally {
    clearInterval(sampler);
  }
  expect(peak).toBeLessThanOrEqual(3);
  expect(peak).toBeGreaterThanOrEqual(2);
});

it('warms nothing with warmSpares 0', async () => {
  const { logger, records } = recordingLogger();
  const { pool } = await startPool({ warmSpares: 0, logger });
  pool.warm();
  await pool.open('a');
  expect(starts(records)).toBe(1);
  expect(pool.readySpares).toBe(0);
});

it('starts no spare on its own after one failed: an agent that cannot start costs one attempt per thread', async () => {
  const { logger, records } = recordingLogger();
  const { pool } = await startPool({ warmSpares: 1, caps: { refuseInitialize: true }, logger });
  pool.warm();
  await waitFor(() => pool.startFailures.consecutive === 1, 'the spare to fail');
  await expect(pool.open('a')).rejects.toThrow();
  // The thread's own start; its take re-armed the spares, whose start fails as well, and stops there.
  await waitFor(() => pool.startFailures.consecutive === 3, 'the thread’s start and one spare');
  await pool.agentInfo().catch(() => undefined);
  expect(starts(records)).toBe(4);
});
