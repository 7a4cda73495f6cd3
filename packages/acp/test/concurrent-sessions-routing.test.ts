import { expect, it } from 'vitest';
import type { TurnEvent } from '../src/index.js';
import { messageChunks, scripted, startPool } from './support.js';

it('routes the updates of concurrent turns to their own sessions', async () => {
  const { pool } = await startPool();
  const alpha: TurnEvent[] = [];
  const beta: TurnEvent[] = [];

  const [a, b] = await Promise.all([
    pool.runTurn('alpha', scripted({ reply: 'a'.repeat(40), chunks: 20, delayMs: 50 }), {
      onUpdate: (event) => alpha.push(event),
    }),
    pool.runTurn('beta', scripted({ reply: 'b'.repeat(40), chunks: 20 }), {
      onUpdate: (event) => beta.push(event),
    }),
  ]);

  expect(a.sessionId).not.toBe(b.sessionId);
  expect(messageChunks(alpha).join('')).toBe('a'.repeat(40));
  expect(messageChunks(beta).join('')).toBe('b'.repeat(40));
  expect(pool.sessionIdOf('alpha')).toBe(a.sessionId);
});
