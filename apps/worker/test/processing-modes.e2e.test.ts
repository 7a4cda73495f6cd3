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

describe('processing modes per platform, through a worker', () => {
  it('batches per thread, per lane (a batch ends where the sender changes) and per message', async () => {
    h = await startHarness({
      WORKER_CONCURRENCY: '3',
      MESSAGE_PROCESSING_MODE: 'per-thread',
      MESSAGE_PROCESSING_MODES: 'slack=per-lane,telegram=per-message',
    });
    const threads = ['gateway:C1:T1', 'slack:C1:T1', 'telegram:C1:T1'];
    // Each first turn runs until it is cancelled, once everything meant to wait behind it arrived.
    for (const thread of threads)
      await h.send(thread, message(`${thread} opens\n@agent {"delayMs": 120000}`));
    await waitFor(() => h!.signals.filter((s) => s.kind === 'started').length === 3, { what: 'three turns' });
    // Arrives while each thread's first turn runs: ada, ada, bob, ada.
    const during = (thread: string) =>
      ['ada', 'ada', 'bob', 'ada'].map((sender, i) => message(`${thread} ${sender} ${i + 1}`, sender));
    const sent = new Map(threads.map((thread) => [thread, during(thread)]));
    for (const [thread, events] of sent) for (const event of events) await h.send(thread, event);
    for (const thread of threads) await h.worker.controls.cancel(thread);

    const expected: Record<string, number[][]> = {
      'gateway:C1:T1': [[0, 1, 2, 3]],
      'slack:C1:T1': [[0, 1], [2], [3]],
      'telegram:C1:T1': [[0], [1], [2], [3]],
    };
    for (const thread of threads) await waitForReplies(h, thread, 1 + expected[thread]!.length);

    const sessions = await h.prompts();
    for (const thread of threads) {
      // One ACP session per thread, whatever the mode.
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
    expect(sessions).toHaveLength(3);
  });

  it("takes a route's processing mode and batch caps over its platform's", async () => {
    h = await startHarness({ WORKER_CONCURRENCY: '3', MESSAGE_PROCESSING_MODE: 'per-thread' });
    // As ingress records each thread's route at its first message (docs/adr/0058).
    await noteRoute(h, 'gateway:C2:T1', 'one-by-one', { processingMode: 'per-message' });
    await noteRoute(h, 'gateway:C3:T1', 'pairs', { maxBatchMessages: 2 });
    const threads = ['gateway:C1:T1', 'gateway:C2:T1', 'gateway:C3:T1'];
    for (const thread of threads)
      await h.send(thread, message(`${thread} opens\n@agent {"delayMs": 120000}`));
    await waitFor(() => h!.signals.filter((s) => s.kind === 'started').length === 3, { what: 'three turns' });
    const sent = new Map(
      threads.map((thread) => [
        thread,
        ['ada', 'bob', 'ada'].map((sender, i) => message(`${thread} ${i}`, sender)),
      ]),
    );
    for (const [thread, events] of sent) for (const event of events) await h.send(thread, event);
    for (const thread of threads) await h.worker.controls.cancel(thread);

    const expected: Record<string, number[][]> = {
      'gateway:C1:T1': [[0, 1, 2]],
      'gateway:C2:T1': [[0], [1], [2]],
      'gateway:C3:T1': [[0, 1], [2]],
    };
    for (const thread of threads) await waitForReplies(h, thread, 1 + expected[thread]!.length);
    const sessions = await h.prompts();
    for (const thread of threads) {
      const session = sessions.find((turns) => turns[0]!.events[0]!.prompt.startsWith(`${thread} opens`))!;
      const events = sent.get(thread)!;
      expect(session.slice(1).map((turn) => turn.events.map((e) => e.prompt))).toEqual(
        expected[thread]!.map((batch) => batch.map((i) => events[i]!.text)),
      );
    }
  });
});
