import { expect, it } from 'vitest';
import { AgentExitedError, type TurnEvent } from '../src/index.js';
import { grandchildPid, processGone, scripted, startPool, text, waitFor } from './support.js';

it('rejects the turn with AgentExitedError and runs the next turn on a new process', async () => {
  const { pool } = await startPool();
  await pool.runTurn('thread-1', [text('warm up')]);
  const firstPid = pool.pidOf('thread-1');

  const error = await pool.runTurn('thread-1', scripted({ exit: 3 })).catch((caught: unknown) => caught);

  expect(error).toBeInstanceOf(AgentExitedError);
  expect(error).toMatchObject({ pid: firstPid, code: 3, signal: null });
  expect(pool.has('thread-1')).toBe(false);
  const next = await pool.runTurn('thread-1', [text('are you back?')]);
  expect(next.stopReason).toBe('end_turn');
  expect(pool.pidOf('thread-1')).not.toBe(firstPid);
});

it('kills what is left of the process group when the agent dies between turns', async () => {
  const { pool } = await startPool();
  const events: TurnEvent[] = [];
  await pool.runTurn('thread-1', scripted({ spawnGrandchild: true }), {
    onUpdate: (event) => events.push(event),
  });
  const grandchild = grandchildPid(events)!;
  expect(await processGone(grandchild)).toBe(false);

  // The leader alone, with no call in flight; the orphan keeps the protocol stream open.
  process.kill(pool.pidOf('thread-1')!, 'SIGKILL');

  await waitFor(() => processGone(grandchild), 'the orphaned grandchild to die', 2_000);
});
