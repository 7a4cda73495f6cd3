import { agentDefaults } from '@tributary/acp';
import { waitFor } from '@tributary/testkit';
import { afterEach, expect, it } from 'vitest';
import { message, metric, replies, startHarness, type WorkerHarness } from './worker-fixture.js';

let h: WorkerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const THREADS = 40;

/** What became of the agent starts, for a failure to name. */
function starts(harness: WorkerHarness): string {
  const count = (msg: string) => harness.logs.filter((l) => l.msg === msg).length;
  const failure = harness.logs.find((l) => l.msg === 'agent did not start');
  return `${count('agent initialized')} agents started, ${count('agent did not start')} starts failed (${String(failure?.err ?? 'none')}), ${count('the turn could not start; its batch is put back, not counted as failed')} batches put back`;
}

/** The most agent processes between their spawn and their `initialize` answer at once, off the log. */
function peakStarting(logs: Record<string, unknown>[]): number {
  let starting = 0;
  let peak = 0;
  for (const { msg } of logs) {
    if (msg === 'agent process started') peak = Math.max(peak, ++starting);
    if (msg === 'agent initialized' || msg === 'agent did not start') starting--;
  }
  return peak;
}

// The herd that sank batches on two cores: every new thread starting its agent at once, each start
// slowed by all the others past a short init timeout. Starts now take turns, so none times out.
it('answers 40 new threads that arrive at once, with a short init timeout: starts take turns, none is set aside', {
  timeout: 180_000,
}, async () => {
  const bound = agentDefaults.startConcurrency();
  h = await startHarness({
    WORKER_CONCURRENCY: String(THREADS),
    AGENT_MAX_SESSIONS: String(THREADS),
    // Short beside the herd's whole run (forty starts, a few at a time, take tens of seconds), so a
    // timeout counted from the queueing would fail most of them; long enough for one start on a loaded
    // two-core host, which took more than 5 s beside the heavy suites.
    AGENT_INIT_TIMEOUT_MS: '10000',
  });
  const threads = Array.from({ length: THREADS }, (_, i) => `herd-${i}`);
  await Promise.all(threads.map((thread) => h!.send(thread, message(`hello from ${thread}`))));

  await waitFor(() => threads.every((thread) => replies(h!, thread).length === 1), {
    what: () => {
      const answered = threads.filter((t) => replies(h!, t).length > 0).length;
      return `a reply on every thread (${answered} so far; ${starts(h!)})`;
    },
    timeoutMs: 150_000,
  });
  for (const thread of threads) expect(replies(h, thread)[0]!.text).toContain(`hello from ${thread}`);
  expect(
    h.sent.filter((m) => m.kind === 'notice'),
    starts(h),
  ).toEqual([]);
  expect(await metric(h, 'tributary_turns_total{outcome="dead_lettered"}')).toBe(0);
  expect(await metric(h, 'tributary_agent_start_failures_total')).toBe(0);
  // Never more starts at once than the bound (one per CPU by default), and the waits show.
  expect(peakStarting(h.logs)).toBeLessThanOrEqual(bound);
  expect(await metric(h, 'tributary_agent_start_wait_seconds_count')).toBeGreaterThanOrEqual(THREADS);
  expect(await metric(h, 'tributary_agent_start_wait_seconds_sum')).toBeGreaterThan(0);
  expect(await metric(h, 'tributary_agent_start_wait_seconds_bucket{le="0.01"}')).toBeLessThan(THREADS);
});
