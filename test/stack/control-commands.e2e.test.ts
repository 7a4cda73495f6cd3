import { shownText, waitFor } from '@tributary/testkit';
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
    /** What the chat shows: the HTML read as Telegram reads it. */
    shown: () =>
      stack
        .calls('telegram', 'sendMessage')
        .filter((c) => (c.body as { chat_id: number }).chat_id === chatId)
        .map((c) => shownText(c) ?? ''),
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

  it('/status tells the running turn, what waits, the agent and the last turn; /help lists the commands', async () => {
    const c = chat();
    await c.say('@tributary_bot first turn');
    await waitFor(() => c.texts().some((t) => t.includes('first turn')), { what: 'the first answer' });
    await startLongTurn(c);
    expect(await c.say('/status')).toMatchObject({ outcome: 'control', command: 'status' });
    await waitFor(() => c.texts().some((t) => t.includes('Status:')), { what: 'the status' });
    const status = c.shown().find((t) => t.includes('Status:'))!;
    expect(status).toMatch(/^Status: running a turn since \d+ s ago; 2 messages in the inbox/);
    // The agent by its name (the built-in agent's folder), never the worker's paths.
    expect(status).toMatch(/\nAgent: agent, session [\w-]+\nLast turn: complete, ended \d+ s ago$/);
    expect(await c.say('/help@tributary_bot')).toMatchObject({ outcome: 'control', command: 'help' });
    await waitFor(() => c.shown().some((t) => t.startsWith('Commands')), { what: 'the help' });
    expect(c.shown().find((t) => t.startsWith('Commands'))).toContain('/cancel_all');
    await c.say('/cancel-all');
  });
});
