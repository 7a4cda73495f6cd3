import { waitFor } from '@tributary/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { message, replies, startHarness, type WorkerHarness, waitForReplies } from './worker-fixture.js';

let h: WorkerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const started = (harness: WorkerHarness, count: number) =>
  waitFor(() => harness.signals.filter((s) => s.kind === 'started').length >= count, {
    what: `${count} turn starts`,
  });

describe('/cancel and drop-buffer', () => {
  it('cancel ends the running turn as cancelled and keeps buffered messages, which run next', async () => {
    h = await startHarness();
    await h.send('th', message('long job\n@agent {"delayMs": 20000}'));
    await started(h, 1);
    const buffered = [message('one more thing'), message('and another')];
    for (const event of buffered) await h.send('th', event);

    expect(await h.worker.controls.cancel('th')).toEqual({ wasRunning: true });
    await waitForReplies(h, 'th', 2);
    expect(replies(h, 'th').map((r) => r.stopReason)).toEqual(['cancelled', 'end_turn']);
    const [session] = await h.prompts();
    expect(session!.map((p) => p.events.map((e) => e.prompt))).toEqual([
      ['long job\n@agent {"delayMs": 20000}'],
      buffered.map((e) => e.text),
    ]);
    expect(await h.worker.queue.admin.deadLetters('th')).toEqual([]);
  });

  it('cancel-all drops what had not started and cancels the running turn, whose messages are kept as answered', async () => {
    h = await startHarness();
    const running = message('working\n@agent {"delayMs": 20000}');
    await h.send('th', running);
    await started(h, 1);
    await h.send('th', message('dropped 1'));
    await h.send('th', message('dropped 2'));
    expect(await h.worker.controls.cancelAll('th')).toEqual({ dropped: 2 });
    await waitForReplies(h, 'th', 1);
    expect(replies(h, 'th').map((r) => r.stopReason)).toEqual(['cancelled']);
    await waitFor(async () => (await h!.worker.queue.admin.state('th')).status === 'idle', { what: 'idle' });

    const later = message('after the drop');
    await h.send('th', later);
    await waitForReplies(h, 'th', 2);
    const [session] = await h.prompts();
    expect(session!.map((p) => p.events.map((e) => e.prompt))).toEqual([[running.text], [later.text]]);
  });

  it('a turn cancelled before the agent said anything ends with the cancel notice, not an empty reply', async () => {
    h = await startHarness();
    await h.send('th', message('long job\n@agent {"delayMs": 20000}'));
    await started(h, 1);
    await h.worker.controls.cancel('th');
    await waitForReplies(h, 'th', 1);
    expect(replies(h, 'th')).toMatchObject([
      { stopReason: 'cancelled', text: '⚠️ This turn was cancelled before the agent replied.' },
    ]);
  });

  it('an agent that ends the next prompt at once after a cancel: that turn runs again in a fresh session', async () => {
    h = await startHarness({}, {}, { agentEnv: { TRIBUTARY_AGENT_CAPS: '{"emptyAfterCancel": true}' } });
    await h.send('th', message('long job\n@agent {"delayMs": 20000}'));
    await started(h, 1);
    await h.worker.controls.cancel('th');
    await waitForReplies(h, 'th', 1);

    const next = message('what now?');
    await h.send('th', next);
    await waitForReplies(h, 'th', 2);
    // Answered in its own turn, not one turn late and not with an empty reply.
    const answer = replies(h, 'th')[1]!;
    expect(answer.target.messageId).toBe(next.eventId);
    expect(answer.text).toContain('what now?');
    const dispatches = h.logs.filter((l) => l.msg === 'dispatch').map((l) => l.sessionPath);
    expect(dispatches).toEqual(['new', 'live', 'new']);
    expect(
      h.logs.some((l) => l.level === 40 && String(l.msg).includes('without a word after a cancel')),
    ).toBe(true);
  });
});
