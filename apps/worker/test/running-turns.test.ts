import { createMetrics } from '@tributary/observability';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { RunningTurns, settleAbortedTurns } from '../src/turns/running-turns.js';

/** A bound that the tests whose turns all end never reach. */
const WITHIN_MS = 60_000;

/** Whether `promise` has settled by the time the queued callbacks ran. */
async function settled(promise: Promise<string[]>): Promise<boolean> {
  let done = false;
  void promise.then(() => {
    done = true;
  });
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('RunningTurns', () => {
  it('says at once that none runs when none does', async () => {
    expect(await settled(new RunningTurns().none(WITHIN_MS))).toBe(true);
  });

  it('waits for the last running turn to end, not only the first', async () => {
    const running = new RunningTurns();
    const turns = ['t1', 't2', 't3'].map((thread) => ({ thread, turn: new AbortController() }));
    for (const { thread, turn } of turns) running.start(thread, turn);
    const none = running.none(WITHIN_MS);
    for (const { thread, turn } of turns.slice(0, -1)) running.end(thread, turn);
    expect(await settled(none)).toBe(false);
    expect([...running.threads()]).toEqual(['t3']);
    running.end('t3', turns[2]!.turn);
    expect(await none).toEqual([]);
  });

  it('keeps a newer turn of a thread when the turn it replaced ends', async () => {
    const running = new RunningTurns();
    const older = new AbortController();
    const newer = new AbortController();
    running.start('t1', older);
    running.start('t1', newer);
    const none = running.none(WITHIN_MS);
    running.end('t1', older);
    running.cancel('t1', new Error('cancelled'));
    expect(newer.signal.aborted).toBe(true);
    expect(older.signal.aborted).toBe(false);
    expect(await settled(none)).toBe(false);
    running.end('t1', newer);
    expect(running.has('t1')).toBe(false);
    expect(await none).toEqual([]);
  });

  it("pokes the steering of the thread's running turn only, and only until the turn takes no more steers", () => {
    const running = new RunningTurns();
    const pokes: string[] = [];
    const older = new AbortController();
    const newer = new AbortController();
    running.start('t1', older);
    running.start('t1', newer);
    // A turn that was replaced cannot take the thread's steers.
    running.steer('t1', older, { poke: () => pokes.push('older') });
    running.steer('t1', newer, { poke: () => pokes.push('newer') });
    running.poke('t1');
    running.poke('t2');
    running.unsteer('t1', newer);
    running.poke('t1');
    expect(pokes).toEqual(['newer']);
  });

  it('stops waiting for a turn that does not end, and names its thread', async () => {
    const running = new RunningTurns();
    const ending = new AbortController();
    running.start('stuck', new AbortController());
    running.start('ends', ending);
    const none = running.none(100);
    running.end('ends', ending);
    expect(await none).toEqual(['stuck']);
    expect(running.has('stuck')).toBe(true);
  });
});

describe('settleAbortedTurns, after a drain', () => {
  function reporting() {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    return { lines, report: { logger, metrics: createMetrics() } };
  }
  const unsettledCount = async (report: ReturnType<typeof reporting>['report']) =>
    (await report.metrics.drainUnsettledTurnsTotal.get()).values[0]?.value ?? 0;

  it('names a turn that does not end in a warn line and counts it', async () => {
    const running = new RunningTurns();
    running.start('stuck', new AbortController());
    const { lines, report } = reporting();
    await settleAbortedTurns(running, 50, report);
    expect(lines).toMatchObject([{ level: 40, threads: ['stuck'], waitedMs: 50 }]);
    expect(String(lines[0]!.msg)).toContain('restart this worker');
    expect(await unsettledCount(report)).toBe(1);
  });

  it('says nothing and counts nothing when every aborted turn ends', async () => {
    const running = new RunningTurns();
    const turn = new AbortController();
    running.start('t1', turn);
    const { lines, report } = reporting();
    const settling = settleAbortedTurns(running, WITHIN_MS, report);
    running.end('t1', turn);
    await settling;
    expect(lines).toEqual([]);
    expect(await unsettledCount(report)).toBe(0);
  });
});
