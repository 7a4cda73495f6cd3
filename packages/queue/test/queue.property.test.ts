import { waitFor } from '@tributary/testkit';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Runner } from '../src/runner.js';
import { noReplies, type QueueFixture, queueFixture } from './fixture.js';

let f: QueueFixture;
beforeAll(async () => {
  f = await queueFixture();
});
afterAll(() => f.close());

const scenario = fc.record({
  runners: fc.integer({ min: 2, max: 4 }),
  maxBatchMessages: fc.integer({ min: 1, max: 5 }),
  maxBatchTokens: fc.integer({ min: 4, max: 12 }),
  messages: fc.array(
    fc.record({
      thread: fc.integer({ min: 0, max: 3 }),
      tokens: fc.integer({ min: 1, max: 8 }),
      gapMs: fc.integer({ min: 0, max: 15 }),
      // After this message, an edit or delete of an earlier one (racing its dispatch).
      revise: fc.option(
        fc.record({
          target: fc.nat(),
          action: fc.constantFrom('edit', 'delete'),
          tokens: fc.integer({ min: 1, max: 8 }),
        }),
        { nil: undefined },
      ),
    }),
    { minLength: 1, maxLength: 40 },
  ),
  turnMs: fc.array(fc.integer({ min: 0, max: 25 }), { minLength: 1, maxLength: 8 }),
  // The attempts of each turn: a second one is the worker's repair (the agent ended the first at once
  // after a cancel: the batch runs again in a fresh session, with what was steered into the first). In
  // each, the steers it tries while it runs, racing arrivals, edits, deletes and other threads' commits:
  // whether the agent takes what a steer took into the batch (false: it refused, and steering stops
  // for that attempt).
  attempts: fc.array(fc.array(fc.boolean(), { maxLength: 3 }), { minLength: 1, maxLength: 2 }),
});

/**
 * A scenario that steers whatever the generator draws: one thread's messages keep arriving 3 ms apart
 * while its first turn waits 25 ms before each steer, and the caps leave the steers room.
 */
const steeringExample: typeof scenario extends fc.Arbitrary<infer T> ? T : never = {
  runners: 2,
  maxBatchMessages: 5,
  maxBatchTokens: 12,
  messages: Array.from({ length: 8 }, () => ({ thread: 0, tokens: 1, gapMs: 3, revise: undefined })),
  turnMs: [25],
  attempts: [[true, true, true]],
};

/** Refused steers, then a repair that steers again: what the first attempt refused must be offered again. */
const repairExample: typeof steeringExample = {
  ...steeringExample,
  messages: Array.from({ length: 8 }, (_, i) => ({
    thread: 0,
    tokens: 1,
    gapMs: 3,
    // Deletes racing the refused steers.
    revise: i % 3 === 2 ? { target: i - 1, action: 'delete' as const, tokens: 1 } : undefined,
  })),
  attempts: [[false], [true, true]],
};

/** Steers that joined a running turn, across all runs: the property must meet some. */
let steered = 0;

/** Edits and deletes that found their message still waiting, across all runs: the property must meet some. */
let appliedRevisions = 0;

/** Repairs that steered again after a refused steer, across all runs: the property must meet some. */
let resteeredRepairs = 0;

describe('queue properties under concurrent runners', () => {
  it('commits every message exactly once, in order, within caps, one turn per thread at a time, edited or deleted only while buffered, steers and repairs racing commits: each acknowledged message was in one accepted prompt', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const { queue, doorbell } = await f.make({
          maxBatchMessages: s.maxBatchMessages,
          maxBatchTokens: s.maxBatchTokens,
          countTokens: (body) => body.length,
        });
        const running = new Set<string>();
        const violations: string[] = [];
        let turns = 0;
        // Per batch: the messages of the prompts the agent accepted in the attempt that answered it.
        const prompted = new Map<string, string[]>();
        const runners = Array.from(
          { length: s.runners },
          () =>
            new Runner({
              queue,
              doorbell,
              connection: f.redis,
              replies: noReplies,
              concurrency: 2,
              // Without a sweeper, a lost wakeup leaves a thread undrained and the wait below fails.
              sweep: false,
              handler: async (batch) => {
                const thread = batch.lease.thread;
                if (running.has(thread)) violations.push(`two turns at once on ${thread}`);
                running.add(thread);
                let deliveredThrough = batch.messages.at(-1)!.streamId;
                let accepted: string[] = [];
                let refusedBefore = false;
                for (const [attempt, steers] of s.attempts.entries()) {
                  // A repair is a fresh session given the batch as the first attempt left it.
                  accepted = batch.messages.map((m) => m.id);
                  deliveredThrough = batch.messages.at(-1)!.streamId;
                  let refused = false;
                  for (const agentTakes of steers) {
                    // A generated pause mid-turn, for arrivals to race the steer.
                    await new Promise((resolve) => setTimeout(resolve, s.turnMs[turns % s.turnMs.length]));
                    const taken = await queue.turns.steer(batch, deliveredThrough);
                    if (taken.kind === 'full') break;
                    if (taken.messages.length === 0) continue;
                    if (!agentTakes) {
                      refused = true;
                      break;
                    }
                    batch.messages.push(...taken.messages);
                    accepted.push(...taken.messages.map((m) => m.id));
                    deliveredThrough = taken.messages.at(-1)!.streamId;
                    steered += taken.messages.length;
                    if (attempt > 0 && refusedBefore) resteeredRepairs++;
                  }
                  refusedBefore ||= refused;
                }
                prompted.set(batch.id, accepted);
                const tokens = batch.messages.reduce((sum, m) => sum + m.tokens, 0);
                if (batch.messages.length > s.maxBatchMessages) violations.push('message cap exceeded');
                if (batch.messages.length > 1 && tokens > s.maxBatchTokens)
                  violations.push('token cap exceeded');
                // Sleeps on purpose: turn lengths and arrival gaps are what the property varies to
                // produce interleavings; nothing waits on a condition with them.
                await new Promise((resolve) => setTimeout(resolve, s.turnMs[turns++ % s.turnMs.length]));
                running.delete(thread);
                return { reply: batch.id, stopReason: 'end_turn', deliveredThrough };
              },
            }),
        );
        await Promise.all(runners.map((r) => r.start()));

        // What each thread must commit: its accepted messages in order, with the body of the last edit
        // applied while buffered, without those deleted while buffered, nor those deleted while a
        // steer held them that no accepted prompt carried (the delete could not tell them from
        // dispatched ones).
        const sent = new Map<string, { id: string; body: string }[]>();
        const deletedAfterTaken = new Set<string>();
        const accepted: { thread: string; id: string }[] = [];
        for (const [i, m] of s.messages.entries()) {
          const thread = `th-${m.thread}`;
          const result = await queue.intake.enqueue(thread, { id: `m${i}`, body: 'x'.repeat(m.tokens) });
          if (result.outcome === 'accepted') {
            sent.set(thread, [...(sent.get(thread) ?? []), { id: `m${i}`, body: 'x'.repeat(m.tokens) }]);
            accepted.push({ thread, id: `m${i}` });
          }
          if (m.revise) {
            const target = accepted[m.revise.target % accepted.length]!;
            const body = 'y'.repeat(m.revise.tokens);
            const key = `${target.id}@${m.revise.action}-${i}`;
            const revision =
              m.revise.action === 'edit'
                ? ({ action: 'edit', messageId: target.id, idempotencyKey: key, body } as const)
                : ({ action: 'delete', messageId: target.id, idempotencyKey: key } as const);
            const revised = await queue.intake.revise(target.thread, revision);
            if (revised === 'dispatched' && m.revise.action === 'delete') deletedAfterTaken.add(target.id);
            if (revised === 'applied') {
              appliedRevisions++;
              const expected = sent.get(target.thread)!;
              sent.set(
                target.thread,
                m.revise.action === 'edit'
                  ? expected.map((e) => (e.id === target.id ? { id: e.id, body } : e))
                  : expected.filter((e) => e.id !== target.id),
              );
            }
          }
          if (m.gapMs > 0) await new Promise((resolve) => setTimeout(resolve, m.gapMs)); // a generated gap
        }
        // No lost wakeups: every thread drains to idle without any sweeper help.
        await waitFor(
          async () => {
            for (const thread of sent.keys()) {
              const st = await queue.admin.state(thread);
              if (st.status !== 'idle' || st.backlog !== 0) return false;
            }
            return true;
          },
          { what: 'all threads drained', timeoutMs: 15_000 },
        );
        await Promise.all(runners.map((r) => r.close()));

        expect(violations).toEqual([]);
        const everPrompted = new Set([...prompted.values()].flat());
        for (const [thread, sentHere] of sent) {
          const history = (await queue.admin.history(thread)).reverse();
          expect(history.every((r) => r.status === 'complete' && r.reply === r.batchId)).toBe(true);
          // Every acknowledged message was in exactly one prompt that the agent accepted: its batch's.
          for (const record of history)
            expect(record.messages.map((m) => m.id)).toEqual(prompted.get(record.batchId));
          const expected = sentHere.filter((e) => !deletedAfterTaken.has(e.id) || everPrompted.has(e.id));
          expect(history.flatMap((r) => r.messages.map((m) => ({ id: m.id, body: m.body })))).toEqual(
            expected,
          );
        }
      }),
      // A failing run reports itself (with the seed to replay and shrink it) rather than shrinking
      // through runs of up to 15 s each until the test's own timeout hides what failed.
      { numRuns: 12, examples: [[steeringExample], [repairExample]], endOnFailure: true },
    );
    expect(appliedRevisions).toBeGreaterThan(0);
    expect(steered).toBeGreaterThan(0);
    expect(resteeredRepairs).toBeGreaterThan(0);
  }, 120_000);
});
