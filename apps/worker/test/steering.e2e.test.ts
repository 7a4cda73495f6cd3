import { waitFor } from '@tributary/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Fleet, startFleet } from './fleet/fleet.js';
import {
  agentPrompts,
  message,
  metric,
  noteRoute,
  replies,
  startHarness,
  type WorkerHarness,
  waitForReplies,
} from './worker-fixture.js';

let h: WorkerHarness | undefined;
let fleet: Fleet | undefined;
afterEach(async () => {
  await h?.close();
  await fleet?.close();
  h = undefined;
  fleet = undefined;
});

const THREAD = 'gateway:C1:T1';
const STEERING_AGENT = { TRIBUTARY_AGENT_CAPS: JSON.stringify({ steering: true }) };
const dispatches = (harness: WorkerHarness) => harness.logs.filter((l) => l.msg === 'dispatch');
const steerLogs = (harness: WorkerHarness) => harness.logs.filter((l) => l.msg === 'steer');

/** Each prompt the agent kept for the thread's session: the texts of its events, steered or not. */
async function promptTexts(harness: WorkerHarness): Promise<string[][]> {
  const [session] = await harness.prompts();
  return session!.map((prompt) => prompt.events.map((event) => event.prompt));
}

describe('steering', { timeout: 90_000 }, () => {
  it('sends a message that arrives mid-turn into the running turn and commits it with that turn', async () => {
    h = await startHarness({ STEERING: 'on' }, {}, { agentEnv: STEERING_AGENT });
    const long = message('long job\n@agent {"delayMs": 1500}');
    await h.send(THREAD, long);
    await waitFor(() => dispatches(h!).length === 1, { what: 'the turn to start' });
    const correction = message('actually, only the unit tests', 'grace');
    await h.send(THREAD, correction);
    await waitForReplies(h, THREAD, 1);

    // The agent took it as a steer of the running turn, packed as a batch's event is, and answered it.
    expect(await promptTexts(h)).toEqual([[long.text], [correction.text]]);
    expect(replies(h, THREAD)[0]!.text).toContain('Steered into this turn: 1 message.');
    expect(steerLogs(h)).toHaveLength(1);
    await waitFor(async () => (await h!.worker.queue.admin.state(THREAD)).status === 'idle', {
      what: 'idle',
    });
    const [record] = await h.worker.queue.admin.history(THREAD);
    expect(record!.messages.map((m) => m.id)).toEqual([long.eventId, correction.eventId].map(String));
    expect(dispatches(h)).toHaveLength(1);
    expect(await metric(h, 'tributary_steered_events_total{platform="gateway"}')).toBe(1);
    expect(await metric(h, 'tributary_batch_size_sum{platform="gateway"}')).toBe(2);
  });

  it('a steer the agent never answers holds nothing: the turn commits, the message leads the next turn, warned and counted', async () => {
    h = await startHarness(
      { STEERING: 'on', CANCEL_TIMEOUT_MS: '1000' },
      {},
      { agentEnv: { TRIBUTARY_AGENT_CAPS: JSON.stringify({ steering: true, steerUnanswered: true }) } },
    );
    const long = message('long job\n@agent {"delayMs": 1500}');
    await h.send(THREAD, long);
    await waitFor(() => dispatches(h!).length === 1, { what: 'the turn to start' });
    const correction = message('actually, only the unit tests', 'grace');
    await h.send(THREAD, correction);
    await waitForReplies(h, THREAD, 2);

    // The unanswered steer is not the turn's: the message is answered by the next one, once.
    expect(await promptTexts(h)).toEqual([[long.text], [correction.text]]);
    expect(replies(h, THREAD).every((r) => !r.text.includes('Steered'))).toBe(true);
    expect(
      h.logs.some((l) => (l.level as number) >= 40 && /did not answer a steer/.test(String(l.msg))),
    ).toBe(true);
    expect(await metric(h, 'tributary_steer_refusals_total{reason="failed"}')).toBe(1);
  });

  it('never sends mid-turn to an agent that does not advertise steering: the message waits', async () => {
    h = await startHarness({ STEERING: 'on' });
    const long = message('long job\n@agent {"delayMs": 800}');
    await h.send(THREAD, long);
    await waitFor(() => dispatches(h!).length === 1, { what: 'the turn to start' });
    const later = message('one more thing');
    await h.send(THREAD, later);
    await waitForReplies(h, THREAD, 2);

    expect(await promptTexts(h)).toEqual([[long.text], [later.text]]);
    expect(steerLogs(h)).toEqual([]);
    expect(replies(h, THREAD).every((r) => !r.text.includes('Steered'))).toBe(true);
  });

  it('does not steer on a route without steering, whatever the agent advertises', async () => {
    h = await startHarness({ STEERING: 'slack' }, {}, { agentEnv: STEERING_AGENT });
    await h.send(THREAD, message('long job\n@agent {"delayMs": 800}'));
    await waitFor(() => dispatches(h!).length === 1, { what: 'the turn to start' });
    await h.send(THREAD, message('one more thing'));
    await waitForReplies(h, THREAD, 2);
    expect(steerLogs(h)).toEqual([]);
    expect(await metric(h, 'tributary_steered_events_total{platform="gateway"}')).toBeNaN();
  });

  it.each([
    ['steers on a route that turns it on, though STEERING is off', 'off', true],
    ['does not steer on a route that turns it off, though STEERING is on', 'on', false],
  ] as const)('%s', async (_title, steering, routeSteers) => {
    h = await startHarness({ STEERING: steering }, {}, { agentEnv: STEERING_AGENT });
    await noteRoute(h, THREAD, 'routed', { steering: routeSteers });
    await h.send(THREAD, message('long job\n@agent {"delayMs": 1500}'));
    await waitFor(() => dispatches(h!).length === 1, { what: 'the turn to start' });
    await h.send(THREAD, message('actually, only the unit tests', 'grace'));
    // Steered: one reply to both; else a second turn answers the second message.
    await waitForReplies(h, THREAD, routeSteers ? 1 : 2);
    expect(steerLogs(h)).toHaveLength(routeSteers ? 1 : 0);
  });

  it('a control command cancels the turn and is never steered into it', async () => {
    h = await startHarness({ STEERING: 'on' }, {}, { agentEnv: STEERING_AGENT });
    await h.send(THREAD, message('long job\n@agent {"delayMs": 20000}'));
    await waitFor(() => dispatches(h!).length === 1, { what: 'the turn to start' });
    expect(await h.worker.controls.cancel(THREAD)).toEqual({ wasRunning: true });
    await waitForReplies(h, THREAD, 1);
    expect(replies(h, THREAD)[0]!.stopReason).toBe('cancelled');
    expect(steerLogs(h)).toEqual([]);
    expect(await promptTexts(h)).toEqual([['long job\n@agent {"delayMs": 20000}']]);
  });
});

describe('steering across a crash', { timeout: 90_000 }, () => {
  it('re-delivers a batch whose worker died after a steer once, with the steered message in it', async () => {
    const f = await startFleet({ STEERING: 'on', ...STEERING_AGENT });
    fleet = f;
    const shared = await f.tempDir();
    const [a, b] = await Promise.all([
      f.spawn({ agentStateDir: shared }),
      f.spawn({ agentStateDir: shared }),
    ]);
    const long = message('long job\n@agent {"delayMs": 6000}');
    await f.send(THREAD, long);
    await waitFor(() => f.dispatches(THREAD).length === 1, { what: 'the long turn to start' });
    const owner = f.dispatches(THREAD)[0]!.worker;
    const correction = message('actually, stop', 'grace');
    await f.send(THREAD, correction);
    await waitFor(() => owner.logs.some((l) => l.msg === 'steer'), { what: 'the steer' });
    await owner.kill();

    await f.waitForReplies(THREAD, 1);
    const rerun = f.dispatches(THREAD)[1]!;
    expect(rerun.worker).toBe(owner === a ? b : a);
    expect(rerun.log).toMatchObject({ events: 2, deliveries: 2, sessionPath: 'new' });

    // In the session the model answered from, each message is there once, in order, as one batch.
    const sessions = await agentPrompts(shared);
    const answering = sessions.find((prompts) => prompts[0]?.sessionId === rerun.log.sessionId)!;
    expect(answering.map((prompt) => prompt.events.map((e) => e.prompt))).toEqual([
      [long.text, correction.text],
    ]);
    await waitFor(async () => (await f.queue.admin.state(THREAD)).status === 'idle', { what: 'idle' });
    const [record] = await f.queue.admin.history(THREAD);
    expect(record!.messages).toHaveLength(2);
    expect(f.replies(THREAD)).toHaveLength(1);
  });
});
