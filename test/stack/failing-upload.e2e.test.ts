import { arrivalFromBody } from '@tributary/packing';
import { type FakeFile, waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postGatewayEvent, type Stack, startStack } from './stack-fixture.js';

const THREAD = 'gateway:line:room:split';

let stack: Stack;
let upload: FakeFile;
beforeAll(async () => {
  // An agent that reads protocol messages of at most 64 KiB: any prompt carrying the 200 KB upload
  // closes its connection, however often it is tried.
  stack = await startStack({ REPLY_STREAM_INTERVAL_MS: '0' }, undefined, {
    TRIBUTARY_AGENT_MAX_MESSAGE_BYTES: String(64 * 1024),
  });
  upload = stack.api.seedFile({
    name: 'dump.txt',
    bytes: Buffer.from(`${'y'.repeat(99)}\n`.repeat(2_000)),
    contentType: 'text/plain',
  });
}, 60_000);
afterAll(() => stack.close());

function post(id: string, sender: string, text: string, files: FakeFile[] = []) {
  const attachments = files.map((file) => ({
    type: 'text_file',
    filename: 'dump.txt',
    mime_type: 'text/plain',
    size: file.size,
    url: file.gatewayUrl,
  }));
  return postGatewayEvent(stack, { id, thread: 'split', sender, text, attachments });
}

const replies = () =>
  stack.calls('gateway', 'reply').map((call) => call.body as { reply_to: string; content: { text: string } });

describe('a batch of two senders where one upload always fails the turn (real stack)', {
  timeout: 120_000,
}, () => {
  it("answers the other sender's message; only the failing one is set aside, with a notice to it", async () => {
    await post('m1', 'cleo', 'warming up\n@agent {"delayMs": 1500}');
    await waitFor(async () => (await stack.worker.queue.admin.state(THREAD)).status === 'running', {
      what: 'the first turn to run',
    });
    // Both wait behind the running turn, so they are batched together.
    await post('m2', 'ada', 'here is the dump', [upload]);
    await post('m3', 'bea', 'a question from Bea');

    await waitFor(() => replies().some((r) => r.content.text.includes('a question from Bea')), {
      what: "Bea's message answered",
      timeoutMs: 90_000,
    });
    await waitFor(() => replies().some((r) => r.reply_to === 'evt_m2' && r.content.text.startsWith('⚠️')), {
      what: "the notice to Ada's message",
      timeoutMs: 30_000,
    });
    const answer = replies().find((r) => r.content.text.includes('a question from Bea'))!;
    expect(answer.reply_to).toBe('evt_m3');
    expect(answer.content.text).not.toContain('here is the dump');

    const dead = await stack.worker.queue.admin.deadLetters(THREAD);
    expect(dead.map((d) => d.messages.map((m) => arrivalFromBody(m.body).text))).toEqual([
      ['here is the dump'],
    ]);
    const history = (await stack.worker.queue.admin.history(THREAD)).reverse();
    expect(history.some((record) => record.split === true)).toBe(true);
    expect(history.filter((r) => r.status === 'complete').map((r) => r.messages.length)).toEqual([1, 1]);
  });
});
