import { expect, it } from 'vitest';
import { SessionCapacityError } from '../src/index.js';
import {
  processGone,
  recordingLogger,
  scripted,
  startPool,
  storedSessions,
  text,
  waitFor,
} from './support.js';

it('evicts the least recently used idle session and closes it in the agent', async () => {
  const { pool, stateDir } = await startPool({ maxSessions: 2 });
  const a = await pool.open('a');
  const b = await pool.open('b');
  await pool.runTurn('a', [text('keep a warm')]);

  const c = await pool.open('c');

  expect([pool.has('a'), pool.has('b'), pool.has('c')]).toEqual([true, false, true]);
  const closed = (await storedSessions(stateDir))
    .filter((session) => session.closedAt)
    .map((s) => s.sessionId);
  expect(closed).toEqual([b.sessionId]);
  expect(new Set([a.sessionId, b.sessionId, c.sessionId]).size).toBe(3);
});

it('drops without session/close when the agent does not advertise it', async () => {
  const { pool, stateDir } = await startPool({ maxSessions: 2, caps: { close: false } });
  await pool.open('a');
  await pool.open('b');
  await pool.open('c');

  expect(pool.has('a')).toBe(false);
  expect((await storedSessions(stateDir)).filter((session) => session.closedAt)).toEqual([]);
});

it('never evicts a session whose turn is running', async () => {
  const { pool } = await startPool({ maxSessions: 2 });
  const controller = new AbortController();
  let started = 0;
  const busy = ['a', 'b'].map((thread) =>
    pool.runTurn(thread, scripted({ delayMs: 60_000 }), {
      signal: controller.signal,
      onUpdate: () => started++,
    }),
  );
  await waitFor(() => started >= 2, 'both turns to start');

  await expect(pool.open('c')).rejects.toBeInstanceOf(SessionCapacityError);
  controller.abort();
  expect((await Promise.all(busy)).map((result) => result.stopReason)).toEqual(['cancelled', 'cancelled']);
});

it('stops an evicted session’s agent quietly: a stream closing under a kill we asked for is no warning', async () => {
  const { logger, records } = recordingLogger();
  const { pool } = await startPool({ maxSessions: 1, logger });
  const pids: number[] = [];
  for (const thread of ['a', 'b', 'c', 'd']) {
    await pool.runTurn(thread, [text(`hello from ${thread}`)]);
    pids.push(pool.pidOf(thread)!);
  }
  // Every evicted agent is gone, and none of its ends was reported as a fault.
  await waitFor(
    async () => (await Promise.all(pids.slice(0, 3).map(processGone))).every(Boolean),
    'evicted agents gone',
  );
  expect(records.filter((r) => r.level === 'warn' || r.level === 'error').map((r) => r.message)).toEqual([]);
});
