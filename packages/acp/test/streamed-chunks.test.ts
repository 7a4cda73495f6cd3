import { expect, it } from 'vitest';
import type { TurnEvent } from '../src/index.js';
import { messageChunks, scripted, startPool } from './support.js';

it('delivers chunks in order before the answer and assembles the text', async () => {
  const { pool } = await startPool();
  const reply = Array.from({ length: 60 }, (_, index) => `<${index}>`).join('');
  const events: TurnEvent[] = [];

  const result = await pool.runTurn('thread-1', scripted({ reply, chunks: 30 }), {
    onUpdate: (event) => events.push(event),
  });

  const chunks = messageChunks(events);
  expect(result.stopReason).toBe('end_turn');
  expect(chunks).toHaveLength(30);
  expect(chunks.join('')).toBe(reply);
  expect(result.text).toBe(reply);
  expect(events[0]).toMatchObject({ kind: 'agent_thought_chunk', content: { type: 'text' } });
});
