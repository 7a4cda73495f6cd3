import type { AgentScript } from '@tributary/agent';
import { expect, it } from 'vitest';
import type { TurnEvent } from '../src/index.js';
import { scripted, startPool, waitFor } from './support.js';

/** Starts a turn that keeps going after session/cancel, and aborts it once it has started. */
async function cancelledTurn(script: AgentScript) {
  const { pool } = await startPool({ cancelTimeoutMs: 10_000 });
  const events: TurnEvent[] = [];
  const controller = new AbortController();
  const turn = pool.runTurn('thread-1', scripted({ delayMs: 300, ignoreCancel: true, ...script }), {
    signal: controller.signal,
    onUpdate: (event) => events.push(event),
  });
  await waitFor(() => events.length > 0, 'the turn to start');
  const pid = pool.pidOf('thread-1');
  controller.abort();
  return { pool, pid, result: await turn };
}

it('passes through the answer of an agent that finished despite the cancel, within the bound', async () => {
  const { pool, pid, result } = await cancelledTurn({ reply: 'finished anyway' });

  expect(result).toMatchObject({ stopReason: 'end_turn', text: 'finished anyway' });
  expect(pool.pidOf('thread-1')).toBe(pid);
});

it('reports a JSON-RPC error answered after the cancel as stopReason cancelled', async () => {
  const { pool, pid, result } = await cancelledTurn({ error: 'interrupted' });

  expect(result).toMatchObject({ stopReason: 'cancelled', text: '' });
  expect(pool.pidOf('thread-1')).toBe(pid);
});
