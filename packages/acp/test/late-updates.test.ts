import { expect, it } from 'vitest';
import type { LateUpdate, TurnEvent } from '../src/index.js';
import { messageChunks, recordingLogger, scripted, startPool, text, waitFor } from './support.js';

it('hands updates sent after the answer to onLateUpdate, never to the next turn', async () => {
  const late: LateUpdate[] = [];
  const { pool } = await startPool({ onLateUpdate: (update) => late.push(update) });
  const first = await pool.runTurn('thread-1', scripted({ reply: 'on time', lateChunk: 'too late' }));
  expect(first.text).toBe('on time');

  const next: TurnEvent[] = [];
  await waitFor(() => late.length > 0, 'the late update');
  await pool.runTurn('thread-1', [text('next')], { onUpdate: (event) => next.push(event) });

  expect(late).toEqual([
    {
      threadKey: 'thread-1',
      sessionId: first.sessionId,
      event: { kind: 'agent_message_chunk', content: { type: 'text', text: 'too late' } },
    },
  ]);
  expect(messageChunks(next)).not.toContain('too late');
});

it('drops late updates with a debug record when no hook is set', async () => {
  const { logger, records } = recordingLogger();
  const { pool } = await startPool({ logger });
  await pool.runTurn('thread-1', scripted({ reply: 'on time', lateChunk: 'too late' }));

  const dropped = await waitFor(
    () => records.find((record) => record.message === 'late update dropped'),
    'the drop',
  );
  expect(dropped).toMatchObject({
    level: 'debug',
    fields: { threadKey: 'thread-1', kind: 'agent_message_chunk' },
  });
});
