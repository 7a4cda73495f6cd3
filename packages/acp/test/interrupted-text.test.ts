import { expect, it } from 'vitest';
import type { TurnEvent } from '../src/index.js';
import { scripted, startPool } from './support.js';

it('separates text that a tool call interrupts, in the result and in the streamed chunks', async () => {
  const { pool } = await startPool();
  const streamed: string[] = [];
  const result = await pool.runTurn(
    'thread-1',
    scripted({ preamble: 'Running the tool now.', toolCalls: 1, reply: 'TOOL-RESULT-SEEN: tool-ran' }),
    {
      onUpdate: (event: TurnEvent) => {
        if (event.kind === 'agent_message_chunk' && event.content.type === 'text') {
          streamed.push(event.content.text);
        }
      },
    },
  );
  expect(result.text).toBe('Running the tool now.\n\nTOOL-RESULT-SEEN: tool-ran');
  expect(streamed.join('')).toBe(result.text);
});

it('keeps chunks of one run of text together', async () => {
  const { pool } = await startPool();
  const result = await pool.runTurn('thread-1', scripted({ reply: 'one two three four', chunks: 4 }));
  expect(result.text).toBe('one two three four');
});
