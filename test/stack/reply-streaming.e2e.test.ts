import { waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postSlackEvent, type Stack, startStack } from './stack-fixture.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ REPLY_STREAM_INTERVAL_MS: '600' });
});
afterAll(() => stack.close());

describe('a streamed reply', () => {
  it('grows in one placeholder, edited at a bounded rate, that ends as the reply', async () => {
    const channel = 'CSTREAM';
    const reply = 'one two three four five six seven eight nine ten eleven twelve';
    const body = JSON.stringify({
      type: 'event_callback',
      team_id: 'T1',
      event_id: 'EvStream',
      event: {
        type: 'message',
        channel,
        user: 'U1',
        ts: '1700200000.000100',
        text: `<@UBOT> count\n@agent {"reply": "${reply}", "chunks": 8, "chunkDelayMs": 500}`,
      },
    });
    await postSlackEvent(stack, body);
    const inChannel = (method: string) =>
      stack.calls('slack', method).filter((c) => (c.body as { channel: string }).channel === channel);
    await waitFor(() => inChannel('chat.update').some((c) => (c.body as { text: string }).text === reply), {
      what: 'the final edit',
    });

    const posts = inChannel('chat.postMessage');
    expect(posts).toHaveLength(1);
    const edits = inChannel('chat.update');
    const streamed = edits.slice(0, -1);
    // Partial text while the agent writes, marked as unfinished, growing; the last edit is the reply.
    expect((posts[0]!.body as { text: string }).text.endsWith(' …')).toBe(true);
    for (const edit of streamed) expect((edit.body as { text: string }).text.endsWith(' …')).toBe(true);
    expect((edits.at(-1)!.body as { text: string }).text).toBe(reply);
    // Never faster than Slack's pace for chat.update (1.2 s), though the operator asked for 600 ms and
    // the chunks come every 500 ms: a stream without the bound would write twice as often. Gaps are
    // seen where the fake API receives them: a write that took longer to arrive than the next one
    // shortens its gap by the difference (each write also reserves its slot in Redis first), so a
    // loaded machine is allowed 200 ms of it, still far above the 600 ms asked for.
    expect(streamed.length).toBeGreaterThanOrEqual(1);
    const writes = [posts[0]!, ...streamed].map((c) => c.at);
    for (let i = 1; i < writes.length; i++) expect(writes[i]! - writes[i - 1]!).toBeGreaterThanOrEqual(1_000);
  });
});
