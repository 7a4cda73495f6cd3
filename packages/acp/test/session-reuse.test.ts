import { expect, it } from 'vitest';
import { startPool, storedSessions, text } from './support.js';

it('runs a two-turn conversation on one session per thread', async () => {
  const { pool, stateDir } = await startPool();
  const first = await pool.runTurn('thread-1', [text('check the build')]);
  const second = await pool.runTurn('thread-1', [text('and run e2e')]);

  expect(second.sessionId).toBe(first.sessionId);
  expect(first.text).toContain('session history: 0 earlier turn(s)');
  expect(second.text).toContain('session history: 1 earlier turn(s)');
  const sessions = await storedSessions(stateDir);
  expect(sessions.map((session) => session.sessionId)).toEqual([first.sessionId]);
  expect(await pool.open('thread-1')).toEqual({ sessionId: first.sessionId, path: 'live' });
});
