import { expect, it } from 'vitest';
import { SessionCapacityError } from '../src/index.js';
import { scripted, startPool, storedSessions, text, waitFor } from './support.js';

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
