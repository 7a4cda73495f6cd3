import { waitFor } from '@tributary/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { message, metric, replies, startHarness, type WorkerHarness } from './worker-fixture.js';

let h: WorkerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const notices = (harness: WorkerHarness, thread: string) =>
  harness.sent.filter((m) => m.thread === thread && m.kind === 'notice');

/** The error line of the batch set aside, with its thread, batch id and reason. */
const deadLetterLine = (harness: WorkerHarness, thread: string) =>
  harness.logs.find(
    (l) =>
      l.level === 50 && l.thread === thread && String(l.msg).startsWith('turn failed; batch dead-lettered'),
  );

describe('every agent failure reaches the user, the log and the metrics', () => {
  it('an agent that keeps failing: retried, then set aside with a notice, an error line and a metric', async () => {
    h = await startHarness();
    const event = message('do it\n@agent {"error": "boom"}');
    await h.send('th', event);
    await waitFor(() => notices(h!, 'th').length === 1, { what: 'the notice' });
    expect(notices(h, 'th')[0]!.text).toContain(
      'The agent reported an error while answering these messages, so they were set aside.',
    );
    // What the agent said goes to the log and the dead letter, never to the thread.
    expect(notices(h, 'th')[0]!.text).not.toContain('boom');
    expect(notices(h, 'th')[0]!.target.messageId).toBe(event.eventId);
    const retries = h.logs.filter((l) => l.level === 40 && l.msg === 'turn failed; batch will be retried');
    expect(retries).toHaveLength(2);
    expect(deadLetterLine(h, 'th')).toMatchObject({
      batchId: expect.any(String),
      reason: expect.stringContaining('boom'),
    });
    expect(await metric(h, 'tributary_turns_total{outcome="dead_lettered"}')).toBe(1);
    expect(await h.worker.queue.admin.deadLetters('th')).toMatchObject([
      { failures: 3, messages: [{ id: event.eventId }] },
    ]);
  });

  it('an agent that cannot start: its messages wait, one notice, warn and error lines, /readyz not ready saying why', async () => {
    h = await startHarness({ AGENT_COMMAND: '/nonexistent/agent --acp', AGENT_SLOW_START_NOTICE_MS: '1000' });
    await h.send('th', message('hello?'));
    await waitFor(() => notices(h!, 'th').length === 1, { what: 'the notice' });
    expect(notices(h, 'th')[0]!.text).toContain(
      'The agent is taking longer than usual to start, so these messages are waiting.',
    );
    expect(h.logs.some((l) => l.level === 40 && l.msg === 'agent did not start')).toBe(true);
    expect(
      h.logs.some(
        (l) =>
          l.level === 40 &&
          l.msg === 'the turn could not start; its batch is put back, not counted as failed',
      ),
    ).toBe(true);
    // The third failure in a row holds the worker off new threads: the batch's next try may come
    // after the notice (a thread waits for the spare being started and fails with it, one start).
    await waitFor(
      () =>
        h!.logs.some(
          (l) =>
            l.level === 50 &&
            String(l.msg).startsWith('the agent cannot start; this worker takes no new threads'),
        ),
      { what: 'the error line' },
    );
    const ready = await fetch(`${h.worker.healthUrl}/readyz`);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { error: string }).error).toMatch(
      /agent cannot start \(\d+ failures in a row; last: .*nonexistent/,
    );
    expect(await metric(h, 'tributary_agent_start_failures_total')).toBeGreaterThanOrEqual(3);
    expect(await metric(h, 'tributary_agent_starts_failing')).toBe(1);
    expect(await metric(h, 'tributary_turns_total{outcome="deferred"}')).toBeGreaterThanOrEqual(1);
    // Never set aside, however long it waits: a start failure is the fleet's, not the messages'.
    expect(await metric(h, 'tributary_turns_total{outcome="dead_lettered"}')).toBe(0);
    expect(await h.worker.queue.admin.deadLetters('th')).toEqual([]);
    expect(notices(h, 'th')).toHaveLength(1);
  });

  it('an agent that needs authentication: set aside at once, the user told an operator must sign it in', async () => {
    h = await startHarness(
      { AGENT_ENV: 'TRIBUTARY_AGENT_CAPS' },
      {},
      { agentEnv: { TRIBUTARY_AGENT_CAPS: '{"requireAuth": true}' } },
    );
    const event = message('hello?');
    await h.send('th', event);
    await waitFor(() => notices(h!, 'th').length === 1, { what: 'the notice' });
    const notice = notices(h, 'th')[0]!.text;
    expect(notice).toContain('The agent needs to be signed in before it can answer');
    // The user and the operator are told what would work: the method the agent offers, the variable.
    expect(notice).toContain('An operator must set AGENT_AUTH_METHOD=tributary-test-login');
    expect(deadLetterLine(h, 'th')).toMatchObject({
      reason: expect.stringMatching(
        /requires authentication for session\/new.*it offers "tributary-test-login"; fix: set AGENT_AUTH_METHOD=tributary-test-login/,
      ),
    });
    // Retrying cannot sign the agent in: one attempt, no retries.
    expect(await h.worker.queue.admin.deadLetters('th')).toMatchObject([
      { failures: 1, messages: [{ id: event.eventId }] },
    ]);
  });

  it('an agent that needs authentication, with AGENT_AUTH_METHOD set: each process signs in, turns are answered', async () => {
    h = await startHarness(
      { AGENT_ENV: 'TRIBUTARY_AGENT_CAPS', AGENT_AUTH_METHOD: 'tributary-test-login' },
      {},
      { agentEnv: { TRIBUTARY_AGENT_CAPS: '{"requireAuth": true}' } },
    );
    await h.send('th', message('hello?'));
    await waitFor(() => replies(h!, 'th').length === 1, { what: 'the reply' });
    expect(replies(h, 'th')[0]!.text).toContain('hello?');
    expect(notices(h, 'th')).toEqual([]);
    expect(h.logs.some((l) => l.msg === 'agent authenticated' && l.methodId === 'tributary-test-login')).toBe(
      true,
    );
  });

  it('a method the agent does not offer: set aside at once, the notice names the methods it offers', async () => {
    h = await startHarness(
      { AGENT_ENV: 'TRIBUTARY_AGENT_CAPS', AGENT_AUTH_METHOD: 'api-key' },
      {},
      { agentEnv: { TRIBUTARY_AGENT_CAPS: '{"requireAuth": true}' } },
    );
    const event = message('hello?');
    await h.send('th', event);
    await waitFor(() => notices(h!, 'th').length === 1, { what: 'the notice' });
    expect(notices(h, 'th')[0]!.text).toContain(
      'An operator must set AGENT_AUTH_METHOD to "tributary-test-login" (the agent does not offer "api-key")',
    );
    expect(deadLetterLine(h, 'th')).toMatchObject({
      reason: expect.stringContaining(
        'auth method "api-key" is not offered; it offers "tributary-test-login"',
      ),
    });
    expect(await h.worker.queue.admin.deadLetters('th')).toMatchObject([
      { failures: 1, messages: [{ id: event.eventId }] },
    ]);
  });
});
