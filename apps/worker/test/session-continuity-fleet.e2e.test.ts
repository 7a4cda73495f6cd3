import type { ContentBlock } from '@tributary/acp';
import { waitFor } from '@tributary/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Fleet, type FleetWorker, startFleet } from './fleet/fleet.js';
import { message } from './worker-fixture.js';

let fleet: Fleet | undefined;
afterEach(async () => {
  await fleet?.close();
  fleet = undefined;
});

const THREAD = 'gateway:C1:T1';

/** The worker that dispatched the thread's latest turn. */
const lastDispatcher = (f: Fleet): FleetWorker => f.dispatches(THREAD).at(-1)!.worker;

/**
 * Tests that kill "between turns" wait for the commit and the reply's delivery: a reply can be seen
 * while the commit of the next batch (drained at the turn boundary) is still under way, and before its
 * deliverer recorded it as delivered (killed then, it would hold the thread's outbox for its lock time).
 */
const committed = (f: Fleet) =>
  waitFor(
    async () => (await f.queue.admin.state(THREAD)).status === 'idle' && (await f.outboxEmpty(THREAD)),
    {
      what: 'the turn to be committed and its reply delivered',
    },
  );

/** The prompt the built-in agent received, as it reported it (TRIBUTARY_AGENT_DEFAULTS reportPrompt). */
const reportedPrompt = (text: string) => JSON.parse(text) as ContentBlock[];

/** The JSON Lines of a history block, parsed. */
function historyLines(block: ContentBlock): { role?: string; text?: string; batch_id?: string }[] {
  if (block.type !== 'resource' || !('text' in block.resource)) throw new Error('not a history resource');
  return block.resource.text
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line));
}

// Worker processes start cold (TypeScript loaded by tsx) on a shared machine: allow for it.
describe('session continuity across a fleet of worker processes', { timeout: 90_000 }, () => {
  it.each([
    ['session/resume', {}, 'resumed'],
    ['session/load', { resume: false }, 'loaded'],
  ])(
    'a worker killed between turns: the next turn runs elsewhere on the same session via %s',
    async (_, caps, path) => {
      const f = await startFleet({ TRIBUTARY_AGENT_CAPS: JSON.stringify(caps) });
      fleet = f;
      // Sharing the agent's state directory is what lets another worker's agent resume or load a session.
      const shared = await f.tempDir();
      await Promise.all([f.spawn({ agentStateDir: shared }), f.spawn({ agentStateDir: shared })]);

      await f.send(THREAD, message('remember the plan'));
      await f.waitForReplies(THREAD, 1);
      const first = lastDispatcher(f);
      await committed(f);
      await first.kill();

      await f.send(THREAD, message('what was the plan?'));
      await f.waitForReplies(THREAD, 2);
      const [turn1, turn2] = f.dispatches(THREAD);
      expect(turn2!.worker).not.toBe(first);
      expect(turn2!.log).toMatchObject({
        sessionPath: path,
        sessionId: turn1!.log.sessionId,
        historyTurns: 0,
      });

      // The agent kept the conversation; a session/load replay of turn 1 was not posted again.
      const survivorReplies = f.replies(THREAD).filter((r) => r.worker === turn2!.worker);
      expect(survivorReplies).toHaveLength(1);
      expect(survivorReplies[0]!.message.text).toContain('session history: 1 earlier turn(s)');
      expect(survivorReplies[0]!.message.text).not.toContain('remember the plan');
    },
  );

  it('a worker that held a session while another worker moved the thread on does not reuse it stale', async () => {
    const f = await startFleet({ WORKER_CONCURRENCY: '1' });
    fleet = f;
    const shared = await f.tempDir();
    const holder = await f.spawn({ agentStateDir: shared });
    await f.send(THREAD, message('one'));
    await f.waitForReplies(THREAD, 1);

    // The holder is busy with another thread when turn 2 rings, and a second worker has room: the
    // thread moves, and the second worker resumes the session.
    await f.send('gateway:C1:busy', message('long job\n@agent {"delayMs": 20000}'));
    await waitFor(() => f.dispatches('gateway:C1:busy').length === 1, { what: 'the holder busy' });
    const other = await f.spawn({ agentStateDir: shared });
    await f.send(THREAD, message('two'));
    await f.waitForReplies(THREAD, 2);
    await committed(f);
    await other.kill();

    // Back on the holder, whose copy of the session lacks turn 2: it must resume, not reuse it.
    await f.send(THREAD, message('three'));
    await f.waitForReplies(THREAD, 3);
    const [, turn2, turn3] = f.dispatches(THREAD);
    expect(turn2).toMatchObject({ worker: other, log: { sessionPath: 'resumed' } });
    expect(turn3).toMatchObject({ worker: holder, log: { sessionPath: 'resumed' } });
    expect(f.replies(THREAD)[2]!.message.text).toContain('session history: 2 earlier turn(s)');
  });

  it('a fresh session gets one history block of complete batches only; an interrupted batch joins once complete', async () => {
    const f = await startFleet(
      {
        TRIBUTARY_AGENT_CAPS: JSON.stringify({ resume: false, loadSession: false }),
        TRIBUTARY_AGENT_DEFAULTS: JSON.stringify({ reportPrompt: true }),
      },
      { leaseMs: 1_500, sweepIntervalMs: 200 },
    );
    fleet = f;
    await Promise.all([f.spawn(), f.spawn()]);

    const first = message('first: the build is red');
    await f.send(THREAD, first);
    await f.waitForReplies(THREAD, 1);
    const reply1 = f.replies(THREAD)[0]!.message.text;
    expect(reportedPrompt(reply1)[0]!.type).toBe('text');

    // Turn 2 is interrupted: its worker dies mid-turn, so batch 2 is not complete.
    const second = message('second: fix it\n@agent {"delayMs": 3000}');
    await f.send(THREAD, second);
    await waitFor(() => f.dispatches(THREAD).length === 2, { what: 'turn 2 dispatched' });
    await lastDispatcher(f).kill();
    expect((await f.queue.admin.history(THREAD)).map((r) => r.status)).toEqual(['complete']);

    // Another worker re-delivers batch 2 on a fresh session: history holds batch 1 only.
    await f.waitForReplies(THREAD, 2);
    const redelivery = f.dispatches(THREAD)[2]!;
    expect(redelivery.log).toMatchObject({ type: 'Continuation', sessionPath: 'new', historyTurns: 1 });
    const [history2, ...packed2] = reportedPrompt(f.replies(THREAD).at(-1)!.message.text);
    expect(history2).toMatchObject({
      type: 'resource',
      resource: { uri: 'tributary://thread/gateway%3AC1%3AT1/history' },
    });
    expect(historyLines(history2!).map((l) => [l.role, l.text])).toEqual([
      [undefined, undefined],
      ['user', first.text],
      ['agent', reply1],
    ]);
    // The batch itself follows, unchanged, as the packed events.
    expect(packed2.filter((b) => b.type === 'text').map((b) => (b as { text: string }).text)).toEqual([
      expect.stringContaining('<sender_context>'),
      second.text,
    ]);

    // Killed between turns: the next fresh session holds batches 1 and 2, now that 2 is complete.
    const reply2 = f.replies(THREAD).at(-1)!.message.text;
    await committed(f);
    await lastDispatcher(f).kill();
    await f.spawn();
    const third = message('third: status?');
    await f.send(THREAD, third);
    await f.waitForReplies(THREAD, 3);
    expect(f.dispatches(THREAD).at(-1)!.log).toMatchObject({ sessionPath: 'new', historyTurns: 2 });
    const [history3] = reportedPrompt(f.replies(THREAD).at(-1)!.message.text);
    expect(historyLines(history3!).map((l) => [l.role, l.text])).toEqual([
      [undefined, undefined],
      ['user', first.text],
      ['agent', reply1],
      ['user', second.text],
      ['agent', reply2],
    ]);
  });
});
