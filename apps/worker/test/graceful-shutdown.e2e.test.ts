import { waitFor } from '@tributary/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Fleet, startFleet } from './fleet/fleet.js';
import { message } from './worker-fixture.js';

let fleet: Fleet | undefined;
afterEach(async () => {
  await fleet?.close();
  fleet = undefined;
});

// A worker process starts cold (tsx) in up to 40 s on a busy machine (fleet.ts), and two start here.
describe('graceful shutdown (real worker processes)', { timeout: 120_000 }, () => {
  it('hands a long turn over on SIGTERM: the thread goes on elsewhere, nothing is lost', async () => {
    fleet = await startFleet({ SHUTDOWN_GRACE_MS: '500' });
    // Both workers up first: whichever takes the long turn is the one that leaves.
    await Promise.all([fleet.spawn(), fleet.spawn()]);
    // A turn far longer than the grace period: it cannot finish, so it is cancelled and handed back.
    await fleet.send('gateway:cli:c:long', message('long job\n@agent {"delayMs": 6000}'));
    await waitFor(() => fleet!.dispatches('gateway:cli:c:long').length === 1, {
      what: 'the long turn to start',
    });
    await fleet.send('gateway:cli:c:long', message('waiting behind it\n@agent {"delayMs": 0}'));
    const leaving = fleet.dispatches('gateway:cli:c:long')[0]!.worker;
    const staying = fleet.workers.find((w) => w !== leaving)!;

    const sigterm = performance.now();
    expect(await leaving.terminate()).toBe(0);
    await waitFor(() => fleet!.dispatches('gateway:cli:c:long').length === 2, { what: 'the hand-off' });
    // Printed, not asserted: the figure shows what a deploy costs a running thread.
    console.warn(
      `hand-off: SIGTERM to the turn running again on another worker: ${Math.round(performance.now() - sigterm)} ms`,
    );
    await fleet.waitForReplies('gateway:cli:c:long', 2);

    const dispatches = fleet.dispatches('gateway:cli:c:long');
    expect(dispatches.map((d) => d.worker.name)).toEqual([leaving.name, staying.name, staying.name]);
    // The interrupted batch is delivered again first, alone, then what waited behind it: nothing lost.
    expect(dispatches.map((d) => [d.log.type, d.log.events])).toEqual([
      ['UserRequest', 1],
      ['Continuation', 1],
      ['UserRequest', 1],
    ]);
    const replies = fleet.replies('gateway:cli:c:long');
    expect(replies.map((r) => r.worker)).toEqual([staying, staying]);
    expect(replies[0]!.message.text).toContain('long job');
    expect(replies[1]!.message.text).toContain('waiting behind it');
    expect(leaving.logs.some((l) => l.msg === 'worker stopped; threads handed back')).toBe(true);
  });

  it('lets a turn that fits in the grace period finish before exiting', async () => {
    fleet = await startFleet({});
    const leaving = await fleet.spawn({ env: { SHUTDOWN_GRACE_MS: '20000' } });
    await fleet.send('gateway:cli:c:short', message('short job\n@agent {"delayMs": 1000}'));
    await waitFor(() => fleet!.dispatches('gateway:cli:c:short').length === 1, { what: 'the turn to start' });
    expect(await leaving.terminate()).toBe(0);
    const [reply] = fleet.replies('gateway:cli:c:short');
    expect(reply!.worker).toBe(leaving);
    expect(fleet.dispatches('gateway:cli:c:short')).toHaveLength(1);
  });
});
