import { waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postTelegramMessage, type Stack, startStack } from './stack-fixture.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

const CHAT = -7001;
const THREAD = `telegram:${CHAT}:main`;

async function say(id: number, text: string) {
  const answer = await postTelegramMessage(stack, CHAT, id, text);
  expect(answer.status).toBe(200);
  return answer.body;
}

const texts = () =>
  stack
    .calls('telegram', 'sendMessage')
    .filter((c) => (c.body as { chat_id: number }).chat_id === CHAT)
    .map((c) => (c.body as { text: string }).text);

const state = () => stack.worker.queue.admin.state(THREAD);

describe('a retried /cancel', () => {
  it('does not cancel the turn that started after the first delivery', async () => {
    await say(70_001, '@tributary_bot first job\n@agent {"delayMs": 30000}');
    await waitFor(async () => (await state()).status === 'running', { what: 'the first turn to start' });
    const cancelled = (await state()).batchId;
    expect(await say(70_002, '/cancel')).toMatchObject({ outcome: 'control', command: 'cancel' });
    await waitFor(async () => (await state()).status === 'idle', { what: 'the cancelled turn to end' });

    await say(70_003, '@tributary_bot second job\n@agent {"delayMs": 3000}');
    await waitFor(
      async () => {
        const now = await state();
        return now.status === 'running' && now.batchId !== cancelled;
      },
      { what: 'the second turn to start' },
    );
    // Telegram delivers the update again: the same message id.
    const retry = await say(70_002, '/cancel');

    // The first /cancel's confirmation, the first turn's notice, the second turn's answer.
    await waitFor(async () => texts().length >= 3 && (await state()).status === 'idle', {
      what: 'the second turn to end and be answered',
    });
    const all = texts();
    expect(all.filter((t) => t.includes('was cancelled'))).toHaveLength(1);
    expect(all.filter((t) => t.startsWith('Cancelling the running turn'))).toHaveLength(1);
    expect(all.some((t) => t.includes('second job'))).toBe(true);
    expect(retry).toMatchObject({ outcome: 'duplicate' });
  });
});
