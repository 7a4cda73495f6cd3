import { expect, it } from 'vitest';
import type { TurnEvent } from '../src/index.js';
import { scripted, startPool, text, waitFor } from './support.js';

it('ends a turn cancelled during its delay with stopReason cancelled, keeping the process', async () => {
  const { pool } = await startPool();
  const events: TurnEvent[] = [];
  const controller = new AbortController();

  const turn = pool.runTurn('thread-1', scripted({ delayMs: 60_000 }), {
    signal: controller.signal,
    onUpdate: (event) => events.push(event),
  });
  await waitFor(() => events.some((event) => event.kind === 'agent_thought_chunk'), 'the turn to start');
  const pid = pool.pidOf('thread-1');
  controller.abort();

  expect(await turn).toMatchObject({ stopReason: 'cancelled', text: '' });
  const next = await pool.runTurn('thread-1', [text('still there?')]);
  expect(next.stopReason).toBe('end_turn');
  expect(pool.pidOf('thread-1')).toBe(pid);
});

it('sends no prompt when the signal is already aborted', async () => {
  const { pool } = await startPool();
  const events: TurnEvent[] = [];

  const result = await pool.runTurn('thread-1', [text('never sent')], {
    signal: AbortSignal.abort(),
    onUpdate: (event) => events.push(event),
  });

  expect(result.stopReason).toBe('cancelled');
  expect(events).toEqual([]);
});
