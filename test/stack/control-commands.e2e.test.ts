import { waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postTelegramMessage, type Stack, startStack } from './stack-fixture.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

let ids = 0;
/** A Telegram chat of its own, so each test reads only its own calls. */
function chat() {
  const chatId = -5000 - ++ids;
  const thread = `telegram:${chatId}:main`;
  return {
    thread,
    async say(text: string) {
      const answer = await postTelegramMessage(stack, chatId, 50_000 + ++ids, text);
      expect(answer.status).toBe(200);
      return answer.body;
    },
    texts: () =>
      stack
        .calls('telegram', 'sendMessage')
        .filter((c) => (c.body as { chat_id: number }).chat_id === chatId)
        .map((c) => (c.body as { text: string }).text),
  };
}

async function startLongTurn(c: ReturnType<typeof chat>) {
  await c.say('@tributary_bot long job\n@agent {"delayMs": 30000}');
  await waitFor(async () => (await stack.worker.queue.admin.state(c.thread)).status === 'running', {
    what: 'the long turn to start',
  });
  expect((await c.say('queued while it runs')).outcome).toBe('accepted');
}

describe('control commands', () => {
  it('/cancel stops the running turn and keeps the waiting messages', async () => {
    const c = chat();
    await startLongTurn(c);
    const answer = await c.say('/cancel');
    expect(answer).toMatchObject({ outcome: 'control', command: 'cancel' });
    await waitFor(() => c.texts().some((t) => t.includes('queued while it runs')), {
      what: 'the waiting message to be answered after the cancel',
    });
    expect(c.texts()[0]).toContain('Cancelling the running turn');
    expect(c.texts().at(-1)).toContain('Received 1 message in this turn');
  });

  it('/cancel-all also drops the waiting messages', async () => {
    const c = chat();
    await startLongTurn(c);
    expect(await c.say('/cancel-all')).toMatchObject({ outcome: 'control', command: 'cancel-all' });
    await waitFor(async () => (await stack.worker.queue.admin.state(c.thread)).status === 'idle', {
      what: 'the thread to go idle',
    });
    await c.say('fresh question');
    await waitFor(() => c.texts().some((t) => t.includes('fresh question')), { what: 'the next answer' });
    expect(c.texts().some((t) => t.includes('dropped 1 waiting message'))).toBe(true);
    expect(c.texts().some((t) => t.includes('queued while it runs'))).toBe(false);
  });

  it('/reset drops the waiting messages and the agent session', async () => {
    const c = chat();
    await c.say('@tributary_bot first turn');
    await waitFor(() => c.texts().some((t) => t.includes('first turn')), { what: 'the first answer' });
    await startLongTurn(c);
    expect(await c.say('/reset')).toMatchObject({ outcome: 'control', command: 'reset' });
    await waitFor(async () => (await stack.worker.queue.admin.state(c.thread)).status === 'idle', {
      what: 'the thread to go idle',
    });
    await c.say('after the reset');
    await waitFor(() => c.texts().some((t) => t.includes('after the reset')), {
      what: 'the answer after reset',
    });
    const last = c.texts().at(-1)!;
    // A fresh session: the agent remembers no earlier turn.
    expect(last).toContain('session history: 0 earlier turn(s)');
    expect(c.texts().some((t) => t.includes('queued while it runs'))).toBe(false);
  });
});
