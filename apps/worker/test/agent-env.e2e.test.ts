import { afterEach, describe, expect, it } from 'vitest';
import { message, replies, startHarness, type WorkerHarness, waitForReplies } from './worker-fixture.js';

let h: WorkerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  delete process.env.TRIB_TEST_PASSED;
  delete process.env.TRIB_TEST_WITHHELD;
});

describe('agent environment', () => {
  it('passes the variables named in AGENT_ENV and nothing else of the worker’s environment', async () => {
    // Short enough not to count as a secret: a longer value handed to the agent is blanked from its reply.
    process.env.TRIB_TEST_PASSED = 'passed';
    process.env.TRIB_TEST_WITHHELD = 'withheld-value';
    h = await startHarness({ AGENT_ENV: 'TRIB_TEST_PASSED' });
    await h.send('th', message('@agent {"env": ["TRIB_TEST_PASSED", "TRIB_TEST_WITHHELD"]}'));
    await waitForReplies(h, 'th', 1);
    const [reply] = replies(h, 'th');
    expect(reply!.text).toContain('env TRIB_TEST_PASSED=passed\n');
    expect(reply!.text).toContain('env TRIB_TEST_WITHHELD is unset');
  });
});
