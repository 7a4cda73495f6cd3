import { arrivalFromBody, envelopeTokens } from '@tributary/packing';
import { waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postGatewayMessage, type Stack, startStack } from './stack-fixture.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

let n = 0;
async function say(text: string) {
  n++;
  const answer = await postGatewayMessage(stack, n, 'm1', text, 'metrics');
  expect(answer.body).toMatchObject({ outcome: 'accepted' });
}

/** One sample of the worker's exposition, e.g. `tributary_batch_size_sum{platform="gateway"}`. */
async function sample(name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${stack.worker.healthUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  if (!line) throw new Error(`no sample ${name}{${labels}} in /metrics`);
  return Number(line.split(' ').at(-1));
}

describe('dispatch metrics', () => {
  it('move by exactly one dispatch of 1 event and one of 3', async () => {
    await say('first, alone\n@agent {"delayMs": 1500}');
    await say('second');
    await say('third');
    await say('fourth');
    const thread = 'gateway:cli:metrics:m1';
    await waitFor(async () => (await stack.worker.queue.admin.history(thread)).length === 2, {
      what: 'two turns committed',
    });
    const events = (await stack.worker.queue.admin.history(thread)).flatMap((r) =>
      r.messages.map((m) => arrivalFromBody(m.body)),
    );
    const platform = 'platform="gateway"';

    expect(await sample('tributary_batch_size_count', platform)).toBe(2);
    expect(await sample('tributary_batch_size_sum', platform)).toBe(4);
    expect(await sample('tributary_batch_size_bucket', `le="1",${platform}`)).toBe(1);
    expect(await sample('tributary_batch_size_bucket', `le="2",${platform}`)).toBe(1);
    expect(await sample('tributary_batch_size_bucket', `le="3",${platform}`)).toBe(2);

    // Each event is a sender_context block and a text block; the fresh session had no history to restore.
    expect(await sample('tributary_packed_block_count_count', platform)).toBe(2);
    expect(await sample('tributary_packed_block_count_sum', platform)).toBe(8);

    expect(await sample('tributary_context_tokens_per_event_count', platform)).toBe(4);
    expect(await sample('tributary_context_tokens_per_event_sum', platform)).toBe(
      events.reduce((sum, event) => sum + envelopeTokens(event), 0),
    );
    expect(await sample('tributary_turns_total', 'outcome="committed"')).toBe(2);
  });
});
