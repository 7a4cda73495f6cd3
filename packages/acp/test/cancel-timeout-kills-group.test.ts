import { expect, it } from 'vitest';
import { TurnCancelTimeoutError, type TurnEvent } from '../src/index.js';
import { grandchildPid, messageChunks, processGone, scripted, startPool, text, waitFor } from './support.js';

it('kills only the process group of the session whose agent ignores cancel; other turns stream on', async () => {
  let restarts = 0;
  const { pool } = await startPool({
    cancelTimeoutMs: 300,
    killGraceMs: 300,
    env: { TRIBUTARY_AGENT_SCRIPTING: 'on' },
    onAgentRestart: () => restarts++,
  });
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
  const reply = 'b'.repeat(40);
  const other = pool.runTurn('thread-2', scripted({ reply, chunks: 40, chunkDelayMs: 100 }), {
    onUpdate: (event) => otherEvents.push(event),
  });
  const grandchild = await waitFor(() => grandchildPid(events), 'the grandchild pid');
  await waitFor(() => messageChunks(otherEvents).length > 0, 'the other turn to stream');
  const hungPid = pool.pidOf('thread-1')!;
  const otherPid = pool.pidOf('thread-2')!;
  const otherSession = pool.sessionIdOf('thread-2');
  expect(hungPid).not.toBe(otherPid);
  controller.abort();

  const error = await turn.catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(TurnCancelTimeoutError);
  expect(error).toMatchObject({ threadKey: 'thread-1', cancelTimeoutMs: 300 });
  expect(await processGone(hungPid)).toBe(true);
  await waitFor(() => processGone(grandchild), 'the grandchild to die', 2_000);
  const streamedBeforeKill = messageChunks(otherEvents).length;
  expect(streamedBeforeKill).toBeLessThan(40);

  // The other thread's turn, process and session outlive the kill.
  expect(await other).toMatchObject({ stopReason: 'end_turn', text: reply, sessionId: otherSession });
  expect(messageChunks(otherEvents)).toHaveLength(40);
  expect(pool.pidOf('thread-2')).toBe(otherPid);
  expect(await processGone(otherPid)).toBe(false);
  expect(pool.has('thread-1')).toBe(false);
  expect(restarts).toBe(1);

  const next = await pool.runTurn('thread-1', [text('again')]);
  expect(next.stopReason).toBe('end_turn');
  expect(pool.pidOf('thread-1')).not.toBe(hungPid);
  expect((await pool.runTurn('thread-2', [text('still you?')])).sessionId).toBe(otherSession);
});
