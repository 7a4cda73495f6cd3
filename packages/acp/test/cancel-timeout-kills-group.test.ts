import { expect, it } from 'vitest';
import { TurnCancelTimeoutError, type TurnEvent } from '../src/index.js';
import { processGone, scripted, startPool, text, waitFor } from './support.js';

it('kills the process group of an agent that ignores cancel, then starts a fresh one', async () => {
  const { pool } = await startPool({ cancelTimeoutMs: 300, killGraceMs: 300 });
  const events: TurnEvent[] = [];
  const controller = new AbortController();

  const turn = pool.runTurn(
    'thread-1',
    scripted({ hang: true, spawnGrandchild: true, ignoreSigterm: true }),
    {
      signal: controller.signal,
      onUpdate: (event) => events.push(event),
    },
  );
  const grandchild = await waitFor(() => {
    for (const event of events) {
      const match =
        event.kind === 'agent_thought_chunk' &&
        event.content.type === 'text' &&
        /grandchild pid (\d+)/.exec(event.content.text);
      if (match) return Number(match[1]);
    }
    return undefined;
  }, 'the grandchild pid');
  const agentPid = pool.agentPid!;
  controller.abort();

  const error = await turn.catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(TurnCancelTimeoutError);
  expect(error).toMatchObject({ threadKey: 'thread-1', cancelTimeoutMs: 300 });
  expect(await processGone(agentPid)).toBe(true);
  await waitFor(() => processGone(grandchild), 'the grandchild to die', 2_000);

  const next = await pool.runTurn('thread-1', [text('again')]);
  expect(next.stopReason).toBe('end_turn');
  expect(pool.agentPid).not.toBe(agentPid);
});
