import { expect, it } from 'vitest';
import { type AgentLauncher, localLauncher } from '../src/index.js';
import { recordingLogger, startPool, text, waitFor } from './support.js';

const starts = (records: { message: string }[]) =>
  records.filter((record) => record.message === 'agent process started').length;

it('hands a new thread a warm spare, so opening its session starts no process, and refills it', async () => {
  const { logger, records } = recordingLogger();
  const { pool } = await startPool({ warmSpares: 1, logger });
  pool.warm();
  await waitFor(() => pool.readySpares === 1, 'the spare to be ready');
  expect(starts(records)).toBe(1);
  const spare = records.find((record) => record.message === 'agent process started')!.fields.pid;

  await pool.open('a');
  // The spare carried the session; its replacement starts in the background.
  expect(pool.pidOf('a')).toBe(spare);
  await waitFor(() => pool.readySpares === 1, 'the replacement spare');
  expect(starts(records)).toBe(2);
  expect(pool.liveProcesses).toBe(2);
});

it('keeps a spare ready at the session cap, so the next new thread still takes one', async () => {
  const { logger, records } = recordingLogger();
  const { pool } = await startPool({ maxSessions: 2, warmSpares: 1, logger });
  pool.warm();
  await pool.open('a');
  await pool.open('b');
  // Both sessions in place: the third process the cap allows is a spare again.
  await waitFor(() => pool.readySpares === 1, 'a spare at the cap');
  const holding = [pool.pidOf('a'), pool.pidOf('b')];
  const others = records
    .filter((r) => r.message === 'agent process started')
    .map((r) => r.fields.pid)
    .filter((pid) => !holding.includes(pid as number));
  await pool.open('c');
  // The new thread went to a process that was already running: the spare, not a fresh start.
  expect(others).toContain(pool.pidOf('c'));
});

it('keeps sessions, spares, starting and stopping processes together under maxSessions + warmSpares', async () => {
  const { pool } = await startPool({ maxSessions: 2, warmSpares: 1 });
  pool.warm();
  let peak = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, pool.liveProcesses);
  }, 1);
  try {
    for (let round = 0; round < 3; round++) {
      // More threads than sessions: every open past the second evicts one, whose process must be gone
      // before another starts.
      await Promise.all(
        ['a', 'b', 'c', 'd', 'e'].map((thread) =>
          pool.runTurn(`${thread}${round}`, [text('hi')]).catch(() => undefined),
        ),
      );
    }
  } finally {
    clearInterval(sampler);
  }
  expect(peak).toBeLessThanOrEqual(3);
  expect(peak).toBeGreaterThanOrEqual(2);
});

it('warms nothing with warmSpares 0', async () => {
  const { logger, records } = recordingLogger();
  const { pool } = await startPool({ warmSpares: 0, logger });
  pool.warm();
  await pool.open('a');
  expect(starts(records)).toBe(1);
  expect(pool.readySpares).toBe(0);
});

it('starts no spare on its own after one failed: an agent that cannot start costs one attempt per thread', async () => {
  const { logger, records } = recordingLogger();
  const { pool } = await startPool({ warmSpares: 1, caps: { refuseInitialize: true }, logger });
  pool.warm();
  await waitFor(() => pool.startFailures.consecutive === 1, 'the spare to fail');
  await expect(pool.open('a')).rejects.toThrow();
  // The thread re-armed the spares and waited for the one it started, which failed: that start was
  // the thread's one attempt, and nothing more starts on its own.
  expect(pool.startFailures.consecutive).toBe(2);
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect(pool.startFailures.consecutive).toBe(2);
  await pool.agentInfo().catch(() => undefined);
  expect(starts(records)).toBe(3);
});

// Each of these starts twice as many agents as threads; beside a full test run's other suites on two
// cores, that takes longer than the default test timeout.
const MANY_STARTS_MS = 120_000;

it(
  'keeps more spares after new threads found none ready, within its memory budget, and gives them back when unused',
  async () => {
    let missed = 0;
    const { logger, records } = recordingLogger();
    const { pool } = await startPool({
      warmSpares: 1,
      spareMemoryBytes: 4 * 1024 ** 3,
      spareShrinkMs: 1_000,
      onSpareMissed: () => missed++,
      logger,
    });
    pool.warm();
    // The pool grows only once it knows what a spare costs.
    await waitFor(() => pool.bytesPerSpare !== undefined, 'the spare to be measured');
    expect(pool.bytesPerSpare).toBeGreaterThan(1024 * 1024);

    // Three new threads at once: one takes the spare, two find none and each raise the aim by one.
    await Promise.all(['a', 'b', 'c'].map((thread) => pool.open(thread)));
    expect(missed).toBe(2);
    expect(pool.spareTarget).toBe(3);
    await waitFor(() => pool.readySpares === 3, 'three spares ready', MANY_STARTS_MS);
    expect(pool.liveProcesses).toBe(6);
    expect(records.some((r) => r.message.startsWith('a new thread found no warm spare ready'))).toBe(true);

    // Nobody takes them: each second that they all went unused, one is stopped, down to the floor.
    await waitFor(
      () => pool.spareTarget === 1 && pool.liveProcesses === 4,
      'the spares given back',
      MANY_STARTS_MS,
    );
    expect(pool.readySpares).toBe(1);
    expect(missed).toBe(2);
  },
  2 * MANY_STARTS_MS,
);

it('keeps exactly its floor without a memory budget, however many threads find no spare', async () => {
  let missed = 0;
  const { pool } = await startPool({ warmSpares: 1, onSpareMissed: () => missed++ });
  pool.warm();
  await waitFor(() => pool.bytesPerSpare !== undefined, 'the spare to be measured');
  await Promise.all(['a', 'b', 'c'].map((thread) => pool.open(thread)));
  expect(missed).toBe(2);
  expect(pool.spareTarget).toBe(1);
  await waitFor(() => pool.readySpares === 1, 'the spare again');
  expect(pool.liveProcesses).toBe(4);
});

it(
  'replaces spares one start short of startConcurrency, keeping a start slot for the threads',
  async () => {
    const { logger, records } = recordingLogger();
    const { pool } = await startPool({
      warmSpares: 1,
      spareMemoryBytes: 4 * 1024 ** 3,
      startConcurrency: 2,
      logger,
    });
    pool.warm();
    await waitFor(() => pool.bytesPerSpare !== undefined, 'the spare to be measured');
    await Promise.all(['a', 'b', 'c', 'd'].map((thread) => pool.open(thread)));
    const from = records.length;
    await waitFor(() => pool.readySpares === 4, 'four spares ready', MANY_STARTS_MS);
    // Only spares started since: one at a time, the other slot left to the threads.
    const starting = new Set<unknown>();
    let peak = 0;
    records.forEach(({ message, fields }, index) => {
      if (message === 'agent process started') starting.add(fields.pid);
      if (message === 'agent initialized') starting.delete(fields.pid);
      if (index >= from) peak = Math.max(peak, starting.size);
    });
    expect(peak).toBe(1);
  },
  MANY_STARTS_MS,
);

it('says so, once, when a live spare cannot be measured, and keeps to its floor', async () => {
  const { logger, records } = recordingLogger();
  // Real agents whose memory cannot be read where they run (an agent host too old to answer).
  const local = localLauncher();
  const launcher: AgentLauncher = {
    launch: async (line) => Object.assign(await local.launch(line), { memory: async () => undefined }),
  };
  const { pool } = await startPool({ warmSpares: 1, spareMemoryBytes: 4 * 1024 ** 3, launcher, logger });
  pool.warm();
  const unmeasured = (r: { message: string }) => r.message.startsWith('a warm spare could not be measured');
  await waitFor(() => records.some(unmeasured), 'the warning');
  await Promise.all(['a', 'b', 'c'].map((thread) => pool.open(thread)));
  expect(pool.bytesPerSpare).toBeUndefined();
  expect(pool.spareTarget).toBe(1);
  expect(records.filter(unmeasured)).toHaveLength(1);
});
