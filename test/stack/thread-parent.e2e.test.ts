import { waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postSlackEvent, type Stack, startStack } from './stack-fixture.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

let n = 0;
/** A thread in a channel of its own whose root message was posted before Tributary saw it. */
function slackThread(seedRoot: boolean) {
  const channel = `CP${++n}`;
  const root = `1700100${n}.000100`;
  if (seedRoot) {
    stack.api.seedMessage({
      platform: 'slack',
      channelId: channel,
      messageId: root,
      senderId: 'U9',
      senderName: 'grace',
      text: 'the deploy is stuck',
    });
  }
  return {
    channel,
    async reply(text: string) {
      const ts = `1700100${n}.${String(++n).padStart(6, '0')}`;
      const body = JSON.stringify({
        type: 'event_callback',
        team_id: 'T1',
        event_id: `EvP${n}`,
        event: { type: 'message', channel, user: 'U1', text, ts, thread_ts: root },
      });
      const answer = await postSlackEvent(stack, body);
      expect(answer.body).toMatchObject({ outcome: 'accepted' });
    },
    answers: () =>
      stack
        .calls('slack', 'chat.postMessage')
        .filter((c) => (c.body as { channel: string }).channel === channel)
        .map((c) => (c.body as { text: string }).text),
    parentFetches: () =>
      stack
        .calls('slack', 'conversations.replies')
        .filter((c) => (c.body as { channel?: string }).channel === channel),
  };
}

describe('the thread parent', () => {
  it("opens a fresh session's first prompt as a broker-origin block, fetched once", async () => {
    const thread = slackThread(true);
    await thread.reply('<@UBOT> can you look?');
    await waitFor(() => thread.answers().length === 1, { what: 'the first answer' });
    expect(thread.answers()[0]).toContain('Restored history from the broker: 1 block(s).');
    await thread.reply('and retry it');
    await waitFor(() => thread.answers().length === 2, { what: 'the second answer' });
    // A live session needs nothing restored, and the parent was fetched for the first event only.
    expect(thread.answers()[1]).not.toContain('Restored');
    expect(thread.parentFetches()).toHaveLength(1);
  });

  it('a failing parent fetch neither blocks nor drops the message', async () => {
    const thread = slackThread(true);
    stack.api.failNext({ platform: 'slack', method: 'conversations.replies', status: 500, times: 100 });
    await thread.reply('<@UBOT> anyone there?');
    await waitFor(() => thread.answers().length === 1, { what: 'the answer' });
    expect(thread.answers()[0]).toContain('anyone there?');
    expect(thread.answers()[0]).not.toContain('Restored');
  });

  it('a slow parent fetch neither blocks nor drops the message', async () => {
    const thread = slackThread(true);
    // Slack says "come back in 30 s": longer than ingress waits for a parent.
    stack.api.failNext({
      platform: 'slack',
      method: 'conversations.replies',
      status: 429,
      retryAfterSeconds: 30,
    });
    await thread.reply('<@UBOT> still there?');
    await waitFor(() => thread.answers().length === 1, { what: 'the answer' });
    expect(thread.answers()[0]).toContain('still there?');
  });
});
