import { type FakeFile, waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postGatewayEvent, type Stack, startStack } from './stack-fixture.js';

/** 10 MB of text in lines, as a log file is: under the default 10 MiB per file. */
const TEN_MB = Buffer.from(`${'x'.repeat(99)}\n`.repeat(100_000));

let stack: Stack;
let file: FakeFile;
beforeAll(async () => {
  // The default attachment limits: only what the stack needs to run is set.
  stack = await startStack({ REPLY_STREAM_INTERVAL_MS: '0' });
  file = stack.api.seedFile({ name: 'build.log', bytes: TEN_MB, contentType: 'text/plain' });
}, 60_000);
afterAll(() => stack.close());

/** One gateway message in its own thread carrying `count` links to the 10 MB file. */
function postFiles(thread: string, count: number) {
  return postGatewayEvent(stack, {
    id: `m_${thread}`,
    thread,
    text: `${count} logs for you`,
    attachments: Array.from({ length: count }, (_, i) => ({
      type: 'text_file',
      filename: `log-${i + 1}.txt`,
      mime_type: 'text/plain',
      size: file.size,
      url: file.gatewayUrl,
    })),
  });
}

function replyOf(count: number): string | undefined {
  return stack
    .calls('gateway', 'reply')
    .map((call) => (call.body as { content: { text: string } }).content.text)
    .find((text) => text.includes(`${count} logs for you`));
}

async function metric(name: string): Promise<string> {
  return stack.workerMetrics.registry.getSingleMetricAsString(name);
}

describe('ten-megabyte files at the default limits (real stack, built-in agent)', {
  timeout: 120_000,
}, () => {
  it('4 and 10 files on two threads at once: each turn runs with what fits, the rest as notes; no lease lost', async () => {
    const answers = await Promise.all([postFiles('four', 4), postFiles('ten', 10)]);
    for (const answer of answers) expect(answer.body).toMatchObject({ outcome: 'accepted' });
    await waitFor(() => replyOf(4) !== undefined && replyOf(10) !== undefined, {
      what: 'both turns answered',
      timeoutMs: 90_000,
    });

    for (const count of [4, 10]) {
      const reply = replyOf(count)!;
      const passed = reply
        .split('\n')
        .filter((line) => /^ {3}- file log-\d+\.txt \(text\/plain\)/.test(line));
      const noted = reply.split('\n').filter((line) => /^ {3}- link log-\d+\.txt \(note: /.test(line));
      // Two 10 MB files fit the 24 MiB share of a prompt; the others are named, with why.
      expect(passed, reply).toHaveLength(2);
      expect(noted, reply).toHaveLength(count - 2);
      expect(noted[0]).toContain('one prompt carries; send it again on its own');
    }
    expect(await metric('tributary_lease_expiries_total')).toMatch(/tributary_lease_expiries_total 0/);
    expect(await metric('tributary_fence_rejections_total')).toMatch(/tributary_fence_rejections_total 0/);
    expect(await metric('tributary_dead_lettered_batches_total')).toMatch(
      /tributary_dead_lettered_batches_total 0/,
    );
    // Only the files that fit were downloaded.
    expect(stack.calls('gateway', 'file').length).toBe(4);
  });
});
