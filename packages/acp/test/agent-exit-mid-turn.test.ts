import { expect, it } from 'vitest';
import { AgentExitedError } from '../src/index.js';
import { scripted, startPool, text } from './support.js';

it('rejects the turn with AgentExitedError and runs the next turn on a new process', async () => {
  const { pool } = await startPool();
  await pool.runTurn('thread-1', [text('warm up')]);
  const firstPid = pool.agentPid;

  const error = await pool.runTurn('thread-1', scripted({ exit: 3 })).catch((caught: unknown) => caught);

  expect(error).toBeInstanceOf(AgentExitedError);
  expect(error).toMatchObject({ pid: firstPid, code: 3, signal: null });
  expect(pool.has('thread-1')).toBe(false);
  const next = await pool.runTurn('thread-1', [text('are you back?')]);
  expect(next.stopReason).toBe('end_turn');
  expect(pool.agentPid).not.toBe(firstPid);
});
