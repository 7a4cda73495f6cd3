import { expect, it } from 'vitest';
import type { TurnEvent } from '../src/index.js';
import { scripted, startPool, waitFor } from './support.js';

it('passes through the answer of an agent that finished despite the cancel, within the bound', async () => {
  const { pool } = await startPool({ cancelTimeoutMs: 10_000 });
  const events: TurnEvent[] = [];
  const controller = new AbortController();

  const turn = pool.runTurn(
    'thread-1',
    scripted({ delayMs: 300, ignoreCancel: true, reply: 'finished anyway' }),
    {
      signal: controller.signal,
      onUpdate: (event) => events.push(event),
    },
  );
  await waitFor(() => events.length > 0, 'the turn to start');
  const pid = pool.agentPid;
  controller.abort();

  expect(await turn).toMatchObject({ stopReason: 'end_turn', text: 'finished anyway' });
  expect(pool.agentPid).toBe(pid);
});
