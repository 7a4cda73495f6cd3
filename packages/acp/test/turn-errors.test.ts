import { expect, it } from 'vitest';
import { AgentRequestError, TurnInProgressError } from '../src/index.js';
import { scripted, startPool, text } from './support.js';

it('rejects with AgentRequestError when the agent answers the prompt with an error; the session lives on', async () => {
  const { pool } = await startPool();
  const error = await pool
    .runTurn('thread-1', scripted({ error: 'model overloaded' }))
    .catch((e: unknown) => e);

  expect(error).toBeInstanceOf(AgentRequestError);
  expect(error).toMatchObject({ method: 'session/prompt', code: -32603, agentMessage: 'model overloaded' });
  const next = await pool.runTurn('thread-1', [text('retry')]);
  expect(next.stopReason).toBe('end_turn');
});

it('refuses a second turn on a thread whose turn is running', async () => {
  const { pool } = await startPool();
  const controller = new AbortController();
  const running = pool.runTurn('thread-1', scripted({ delayMs: 60_000 }), { signal: controller.signal });

  await expect(pool.runTurn('thread-1', [text('me too')])).rejects.toBeInstanceOf(TurnInProgressError);
  controller.abort();
  expect((await running).stopReason).toBe('cancelled');
});
