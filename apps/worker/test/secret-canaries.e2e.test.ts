import { waitFor } from '@tributary/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { appendOnlyFiles, message, startHarness, type WorkerHarness } from './worker-fixture.js';

let h: WorkerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  delete process.env.TRIBUTARY_CANARY_INHERITED;
});

// Three kinds of secret a failing agent prints: a value handed to it through AGENT_ENV (inherited
// from the worker), a value set explicitly in its environment, and a key shaped like a provider's.
const INHERITED = 'canary-inherited-5c1e0b7d9a';
const EXPLICIT = 'canary-explicit-8e2f4a6c31';
const SHAPED = 'sk-ant-api03-CanaryShapedKey0123456789abcdef';
const CANARIES = [INHERITED, EXPLICIT, SHAPED];

describe('an agent that prints its secrets as it fails', () => {
  it('leaks none of them to the thread, to Redis or to the log', async () => {
    process.env.TRIBUTARY_CANARY_INHERITED = INHERITED;
    const stderr = `invalid x-api-key ${SHAPED}; ANTHROPIC_API_KEY=\${TRIBUTARY_CANARY_INHERITED}, also tried \${TRIBUTARY_CANARY_EXPLICIT}`;
    h = await startHarness(
      { AGENT_ENV: 'TRIBUTARY_CANARY_INHERITED' },
      {},
      {
        redis: { private: true, appendfsync: 'always' },
        agentEnv: {
          TRIBUTARY_CANARY_EXPLICIT: EXPLICIT,
          TRIBUTARY_AGENT_DEFAULTS: JSON.stringify({ stderr, exit: 1 }),
        },
      },
    );
    await h.send('th', message('hello?'));
    await waitFor(async () => (await h!.worker.queue.admin.deadLetters('th')).length === 1, {
      what: 'the batch set aside',
    });
    // Delivered from the outbox after the commit that set the batch aside.
    await waitFor(() => h!.sent.some((m) => m.kind === 'notice'), { what: 'the notice' });
    const notices = h.sent.filter((m) => m.kind === 'notice');
    expect(notices).toHaveLength(1);
    expect(notices[0]!.text).toContain('The agent stopped unexpectedly while answering these messages');

    // The operator still learns what the agent said, with the secrets blanked.
    const [deadLetter] = await h.worker.queue.admin.deadLetters('th');
    expect(deadLetter!.reason).toContain('invalid x-api-key [redacted]');
    expect(deadLetter!.reason).toContain('ANTHROPIC_API_KEY=[redacted], also tried [redacted]');
    const stderrLines = h.logs.filter((l) => l.msg === 'agent stderr');
    expect(stderrLines.length).toBeGreaterThanOrEqual(1);

    const aof = await appendOnlyFiles(h);
    expect(aof).toContain('invalid x-api-key [redacted]');
    const everything = { notices: JSON.stringify(notices), aof, log: JSON.stringify(h.logs) };
    for (const [where, text] of Object.entries(everything)) {
      for (const canary of CANARIES) expect(text, `${canary} in ${where}`).not.toContain(canary);
    }
  });

  it('an error answer naming the key: the reason keeps the words, not the key', async () => {
    h = await startHarness(
      {},
      {},
      {
        agentEnv: {
          TRIBUTARY_CANARY_EXPLICIT: EXPLICIT,
          TRIBUTARY_AGENT_DEFAULTS: JSON.stringify({ error: `upstream refused key ${EXPLICIT}` }),
        },
      },
    );
    await h.send('th', message('hello?'));
    await waitFor(async () => (await h!.worker.queue.admin.deadLetters('th')).length === 1, {
      what: 'the batch set aside',
    });
    const [deadLetter] = await h.worker.queue.admin.deadLetters('th');
    expect(deadLetter!.reason).toContain('upstream refused key [redacted]');
    const notice = await waitFor(() => h!.sent.find((m) => m.kind === 'notice'), { what: 'the notice' });
    expect(notice?.text).toContain('The agent reported an error while answering these messages');
    expect(JSON.stringify(h.logs)).not.toContain(EXPLICIT);
  });
});
