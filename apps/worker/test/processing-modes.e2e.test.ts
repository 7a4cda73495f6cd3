import { waitFor } from '@tributary/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import {
  message,
  noteRoute,
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

/**
 * Each thread's first turn runs until it is cancelled, once messages from `senders` (in order) arrived
 * behind it; then every thread's turns carry those messages as `expected` says (indexes into them),
 * each in the thread's one ACP session, and each reply answers its batch's last message.
 */
async function batchesAfterAFirstTurn(
  h: WorkerHarness,
  senders: string[],
  expected: Record<string, number[][]>,
): Promise<void> {
  const threads = Object.keys(expected);
  for (const thread of threads) await h.send(thread, message(`${thread} opens\n@agent {"delayMs": 120000}`));
  await waitFor(() => h.signals.filter((s) => s.kind === 'started').length === threads.length, {
    what: 'every first turn',
  });
  const sent = new Map(
    threads.map((thread) => [
      thread,
      senders.map((sender, i) => message(`${thread} ${sender} ${i + 1}`, sender)),
    ]),
  );
  for (const [thread, events] of sent) for (const event of events) await h.send(thread, event);
  for (const thread of threads) await h.worker.controls.cancel(thread);
  for (const thread of threads) await waitForReplies(h, thread, 1 + expected[thread]!.length);

  const sessions = await h.prompts();
  for (const thread of threads) {
    const session = sessions.find((turns) => turns[0]!.events[0]!.prompt.startsWith(`${thread} opens`))!;
    const events = sent.get(thread)!;
    expect(session.slice(1).map((turn) => turn.events.map((e) => e.prompt))).toEqual(
      expected[thread]!.map((batch) => batch.map((i) => events[i]!.text)),
    );
    expect(
      replies(h, thread)
        .map((r) => r.target.messageId)
        .slice(1),
    ).toEqual(expected[thread]!.map((batch) => events[batch.at(-1)!]!.eventId));
  }
  // One ACP session per thread, whatever the mode.
  expect(sessions).toHaveLength(threads.length);
}

describe('processing modes, through a worker', () => {
  it('batches per thread, per lane (a batch ends where the sender changes) and per message, by platform', async () => {
    h = await startHarness({
      WORKER_CONCURRENCY: '3',
      MESSAGE_PROCESSING_MODE: 'per-thread',
      MESSAGE_PROCESSING_MODES: 'slack=per-lane,telegram=per-message',
    });
    await batchesAfterAFirstTurn(h, ['ada', 'ada', 'bob', 'ada'], {
      'gateway:C1:T1': [[0, 1, 2, 3]],
      'slack:C1:T1': [[0, 1], [2], [3]],
      'telegram:C1:T1': [[0], [1], [2], [3]],
    });
  });

  it("takes a route's processing mode and batch caps over its platform's", async () => {
    h = await startHarness({ WORKER_CONCURRENCY: '3', MESSAGE_PROCESSING_MODE: 'per-thread' });
    // As ingress records each thread's route at its first message (docs/adr/0058).
    await noteRoute(h, 'gateway:C2:T1', 'one-by-one', { processingMode: 'per-message' });
    await noteRoute(h, 'gateway:C3:T1', 'pairs', { maxBatchMessages: 2 });
    await batchesAfterAFirstTurn(h, ['ada', 'bob', 'ada'], {
      'gateway:C1:T1': [[0, 1, 2]],
      'gateway:C2:T1': [[0], [1], [2]],
      'gateway:C3:T1': [[0, 1], [2]],
    });
  });
});
