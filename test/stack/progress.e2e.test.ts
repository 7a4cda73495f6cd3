import { waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postSlackEvent, type Stack, startStack } from './stack-fixture.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ REPLY_STREAM_INTERVAL_MS: '300' });
});
afterAll(() => stack.close());

describe('an agent running tools', () => {
  it('shows a tool reaction and a status line in the streamed placeholder, gone from the reply', async () => {
    const channel = 'CPROGRESS';
    const reply = 'one two three four five six';
    // Slow enough for Slack's edit pace (1.2 s) to show the status line before the reply is final.
    const script = { toolKinds: ['read'], reply, chunks: 3, chunkDelayMs: 1_000 };
    const body = JSON.stringify({
      type: 'event_callback',
      team_id: 'T1',
      event_id: 'EvProgress',
      event: {
        type: 'message',
        channel,
        user: 'U1',
        ts: '1700300000.000100',
        text: `<@UBOT> go\n@agent ${JSON.stringify(script)}`,
      },
    });
    await postSlackEvent(stack, body);
    const inChannel = (method: string) =>
      stack.calls('slack', method).filter((c) => (c.body as { channel: string }).channel === channel);
    const texts = () =>
      [...inChannel('chat.postMessage'), ...inChannel('chat.update')].map(
        (c) => (c.body as { text: string }).text,
      );
    await waitFor(() => texts().includes(reply), { what: 'the final reply' });

    expect(texts().some((text) => text.includes('⏳ running: Scripted read tool'))).toBe(true);
    expect(texts().at(-1)).toBe(reply);
    const added = inChannel('reactions.add').map((c) => (c.body as { name: string }).name);
    expect(added).toContain('hammer_and_wrench');
  });
});
