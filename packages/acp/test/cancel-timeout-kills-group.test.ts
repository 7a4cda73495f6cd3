import { expect, it } from 'vitest';
import { AgentExitedError, TurnCancelTimeoutError, type TurnEvent } from '../src/index.js';
import { grandchildPid, processGone, scripted, startPool, text, waitFor } from './support.js';

it('kills the process group of an agent that ignores cancel, then starts a fresh one', async () => {
  const { pool } = await startPool({ cancelTimeoutMs: 300, killGraceMs: 300 });
  const events: TurnEvent[] = [];
  const otherEvents: TurnEvent[] = [];
  const controller = new AbortController();

  const turn = pool.runTurn(
    'thread-1',
    scripted({ hang: true, spawnGrandchild: true, ignoreSigterm: true }),
    {
      signal: controller.signal,
      onUpdate: (event) => events.push(event),
    },
  );
  const other = pool.runTurn('thread-2', scripted({ delayMs: 60_000 }), {
    onUpdate: (event) => otherEvents.push(event),
  });
  const grandchild = await waitFor(() => grandchildPid(events), 'the grandchild pid');
  await waitFor(() => otherEvents.length > 0, 'the other turn to start');
  const agentPid = pool.agentPid!;
  controller.abort();

  const error = await turn.catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(TurnCancelTimeoutError);
  expect(error).toMatchObject({ threadKey: 'thread-1', cancelTimeoutMs: 300 });
  // The kill costs every turn on that process, not only the one that ignored the cancel.
  await expect(other).rejects.toBeInstanceOf(AgentExitedError);
  expect(await processGone(agentPid)).toBe(true);
  await waitFor(() => processGone(grandchild), 'the grandchild to die', 2_000);

  const next = await pool.runTurn('thread-1', [text('again')]);
  expect(next.stopReason).toBe('end_turn');
  expect(pool.agentPid).not.toBe(agentPid);
});
