import { waitFor } from '@tributary/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import {
  message,
  metric,
  noteRoute,
  replies,
  startHarness,
  type WorkerHarness,
  withStore,
} from './worker-fixture.js';

let h: WorkerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const AGENT_DELAY_MS = 1_500;
const TURN = `@agent {"delayMs": ${AGENT_DELAY_MS}, "reply": "done"}`;

describe("a route's limit on concurrent turns across the fleet (docs/adr/0062)", () => {
  it('runs one turn of a route limited to one at a time, and starts the next as the first ends', {
    timeout: 60_000,
  }, async () => {
    // A put-back batch would wait 20 s: only the route's line moving as the slot is freed starts it sooner.
    h = await startHarness({ WORKER_CONCURRENCY: '3' }, { deferDelayMs: 20_000, deferMaxDelayMs: 20_000 });
    // As ingress publishes the route table and records each thread's route (docs/adr/0058).
    await withStore(h, (store) => store.turnLimits.publishTable(new Map([['busy', 1]])));
    for (const thread of ['busy-1', 'busy-2']) await noteRoute(h, thread, 'busy', {});

    const sentAt = Date.now();
    for (const thread of ['busy-1', 'busy-2', 'free']) await h.send(thread, message(TURN));
    await waitFor(() => ['busy-1', 'busy-2', 'free'].every((thread) => replies(h!, thread).length === 1), {
      what: 'all three replies',
      timeoutMs: 15_000,
    });
    // Well before the 20 s put-back delay: the second was rung when the first freed its slot.
    expect(Date.now() - sentAt).toBeLessThan(12_000);

    // The two turns of the limited route never overlapped: the second started once the first's agent
    // was done (its slot is freed then, before the first's commit, so signal order alone would race).
    // The unlimited thread was not held back: it started before the limited route's second.
    const startedAt = (thread: string) =>
      h!.signals.find((s) => s.thread === thread && s.kind === 'started')!.at;
    const [first, second] = [startedAt('busy-1'), startedAt('busy-2')].sort((a, b) => a - b);
    expect(second! - first!).toBeGreaterThanOrEqual(AGENT_DELAY_MS);
    expect(startedAt('free')).toBeLessThan(second!);

    // The second waited in its route's line, let in as the slot was freed: never taken and put back
    // (docs/adr/0064). It waited one turn, not a minute: nobody is told.
    expect(await metric(h, 'tributary_route_turn_waits_total{route="busy"}')).toBeNaN();
    expect(
      h.logs.some((l) => l.msg === 'the turn could not start; its batch is put back, not counted as failed'),
    ).toBe(false);
    expect(
      replies(h, 'busy-2')
        .concat(replies(h, 'busy-1'))
        .filter((r) => r.kind === 'notice'),
    ).toEqual([]);
  });
});
