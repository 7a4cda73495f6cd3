import { waitFor } from '@tributary/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { message, replies, startHarness, type WorkerHarness, waitForReplies } from './worker-fixture.js';

let h: WorkerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

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
    // The reply goes out before the commit records the batch.
    await waitFor(async () => (await h!.worker.queue.history('th')).length === 2, { what: 'both records' });
    const [completed, failed] = await h.worker.queue.history('th');
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
    h = await startHarness({
      TURN_TIMEOUT_MS: '1200',
      STALL_SOFT_MS: '200',
      STALL_HARD_MS: '500',
      CANCEL_TIMEOUT_MS: '300',
    });
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
    expect(replies(h, 'th')[0]!.target.replyToEventId).toBe(next.eventId);
    const [dead] = await h.worker.queue.deadLetters('th');
    expect(dead).toMatchObject({
      reason: expect.stringContaining('turn timed out'),
      failures: 1,
      messages: [{ id: hung.eventId }],
    });
  });
});
