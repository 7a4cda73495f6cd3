import { waitFor } from '@tributary/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import {
  hungTurnLimits,
  message,
  replies,
  startHarness,
  type WorkerHarness,
  waitForReplies,
} from './worker-fixture.js';

let h: WorkerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

// The built-in agent obeys `@agent` lines only when told to; it inherits this through AGENT_ENV.
process.env.TRIBUTARY_AGENT_SCRIPTING = 'on';

const dispatches = (harness: WorkerHarness, thread: string) =>
  harness.logs.filter((line) => line.msg === 'dispatch' && line.thread === thread);

describe('agent failures', () => {
  it('re-prompts the batch on a fresh agent process when the agent is killed mid-turn', async () => {
    h = await startHarness();
    const event = message('build it\n@agent {"delayMs": 1000}');
    await h.send('th', event);
    await waitFor(() => h!.signals.some((s) => s.kind === 'started'), { what: 'turn start' });
    const firstPid = h.worker.pool.pidOf('th')!;
    process.kill(-firstPid, 'SIGKILL');

    await waitForReplies(h, 'th', 1);
    expect(h.worker.pool.pidOf('th')).not.toBe(firstPid);
    // The reply may be seen before the turn boundary's bookkeeping is read back.
    await waitFor(async () => (await h!.worker.queue.admin.history('th')).length === 2, {
      what: 'both records',
    });
    const [completed, failed] = await h.worker.queue.admin.history('th');
    expect(failed).toMatchObject({ status: 'failed', deliveries: 1, messages: [{ id: event.eventId }] });
    expect(completed).toMatchObject({
      status: 'complete',
      deliveries: 2,
      type: 'Continuation',
      messages: [{ id: event.eventId }],
    });
    expect(replies(h, 'th')).toHaveLength(1);
  });

  it('frees a thread whose agent hangs after the turn timeout, tells the user, answers the next message', async () => {
    h = await startHarness(hungTurnLimits);
    const hung = message('hang\n@agent {"hang": true}');
    await h.send('th', hung);
    await waitFor(() => h!.sent.some((m) => m.kind === 'notice'), {
      what: 'timeout notice',
      timeoutMs: 10_000,
    });
    expect(h.signals.map((s) => s.kind).slice(0, 3)).toEqual(['started', 'stall-soft', 'stall-hard']);

    const next = message('are you there?');
    await h.send('th', next);
    await waitForReplies(h, 'th', 1);
    expect(replies(h, 'th')[0]!.target.messageId).toBe(next.eventId);
    const [dead] = await h.worker.queue.admin.deadLetters('th');
    expect(dead).toMatchObject({
      reason: expect.stringContaining('turn timed out'),
      failures: 1,
      messages: [{ id: hung.eventId }],
    });
  });

  it('a hung turn on one thread is killed without touching the turn streaming on another', async () => {
    h = await startHarness({
      ...hungTurnLimits,
      WORKER_CONCURRENCY: '2',
      AGENT_ENV: 'TRIBUTARY_AGENT_SCRIPTING',
    });
    const harness = h;
    const hung = message('hang\n@agent {"hang": true}');
    const streaming = message('stream\n@agent {"reply": "all of it", "chunks": 30, "chunkDelayMs": 150}');
    await harness.send('thread-a', hung);
    await harness.send('thread-b', streaming);
    // Two agents start side by side; on two busy cores a start alone can take several seconds, and
    // how long it takes is not what this test is about.
    const started = (thread: string) =>
      waitFor(() => harness.signals.some((s) => s.kind === 'started' && s.thread === thread), {
        what: `the turn on ${thread} to start`,
        timeoutMs: 30_000,
      });
    await started('thread-b');
    await started('thread-a');
    const pidB = harness.worker.pool.pidOf('thread-b');
    expect(pidB).toBeDefined();
    expect(harness.worker.pool.pidOf('thread-a')).not.toBe(pidB);

    // Thread A: timed out, its agent killed after the cancel timeout, the user told, the batch dead.
    await waitFor(() => harness.sent.some((m) => m.thread === 'thread-a' && m.kind === 'notice'), {
      what: 'the timeout notice on thread-a',
    });
    expect(
      harness.logs.some((l) => l.msg === 'cancel not honoured; killing agent' && l.threadKey === 'thread-a'),
    ).toBe(true);
    const [dead] = await harness.worker.queue.admin.deadLetters('thread-a');
    expect(dead).toMatchObject({
      reason: expect.stringContaining('turn timed out'),
      messages: [{ id: hung.eventId }],
    });

    // Thread B: answered once, by the turn that was streaming while A's agent was killed.
    await waitForReplies(harness, 'thread-b', 1);
    await waitFor(async () => (await harness.worker.queue.admin.state('thread-b')).status === 'idle', {
      what: 'thread-b idle',
    });
    const sentOrder = harness.sent.map((m) => `${m.thread}:${m.kind}`);
    expect(sentOrder.indexOf('thread-a:notice')).toBeLessThan(sentOrder.indexOf('thread-b:reply'));
    expect(replies(harness, 'thread-b')).toHaveLength(1);
    expect(replies(harness, 'thread-b')[0]).toMatchObject({
      stopReason: 'end_turn',
      text: 'all of it',
      target: { messageId: streaming.eventId },
    });
    const [dispatch, ...again] = dispatches(harness, 'thread-b');
    expect(again).toEqual([]);
    expect(dispatch).toMatchObject({ sessionPath: 'new', deliveries: 1 });
    expect(await harness.worker.queue.admin.history('thread-b')).toMatchObject([
      { status: 'complete', deliveries: 1, stopReason: 'end_turn', messages: [{ id: streaming.eventId }] },
    ]);
    expect(harness.worker.pool.sessionIdOf('thread-b')).toBe(dispatch!.sessionId);
    expect(harness.worker.pool.pidOf('thread-b')).toBe(pidB);
  });
});
