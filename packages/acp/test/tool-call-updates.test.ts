import { expect, it } from 'vitest';
import type { TurnEvent } from '../src/index.js';
import { scripted, startPool } from './support.js';

it('types tool calls, their updates and usage', async () => {
  const { pool } = await startPool();
  const events: TurnEvent[] = [];

  await pool.runTurn('thread-1', scripted({ toolCalls: 2, usage: true, reply: 'done' }), {
    onUpdate: (event) => events.push(event),
  });

  const tools = events.filter((event) => event.kind === 'tool_call' || event.kind === 'tool_call_update');
  expect(tools).toMatchObject([
    {
      kind: 'tool_call',
      toolCall: { toolCallId: 'tool-1-1', title: 'Scripted tool 1', status: 'in_progress' },
    },
    { kind: 'tool_call_update', toolCallUpdate: { toolCallId: 'tool-1-1', status: 'completed' } },
    { kind: 'tool_call', toolCall: { toolCallId: 'tool-1-2', status: 'in_progress' } },
    { kind: 'tool_call_update', toolCallUpdate: { toolCallId: 'tool-1-2', status: 'completed' } },
  ]);
  const usage = events.find((event) => event.kind === 'usage');
  expect(usage).toMatchObject({ kind: 'usage', size: 200_000 });
  expect(usage?.kind === 'usage' && usage.used).toBeGreaterThan(0);
});
