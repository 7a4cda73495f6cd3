import { waitFor } from '@tributary/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Fleet, startFleet } from './fleet/fleet.js';
import { message } from './worker-fixture.js';

let fleet: Fleet | undefined;
afterEach(async () => {
  await fleet?.close();
  fleet = undefined;
});

const THREAD = 'gateway:C1:T1';

/** The survivors' sweeper lines that report a takeover (not a lease expiry). */
const takeovers = (f: Fleet) =>
  f.workers
    .flatMap((w) => w.logs)
    .filter((l) => l.msg === 'sweeper revived threads' && Number(l.takenOver) > 0);

// Worker processes start cold (TypeScript loaded by tsx) on a shared machine: allow for it.
describe('crash takeover with real worker processes', { timeout: 90_000 }, () => {
  it('a worker killed mid-turn: its batch runs elsewhere without waiting for its 30 s lease', async () => {
    const f = await startFleet({});
    fleet = f;
    await Promise.all([f.spawn(), f.spawn()]);
    await f.send(THREAD, message('long job\n@agent {"delayMs": 2000}'));
    await waitFor(() => f.dispatches(THREAD).length === 1, { what: 'the turn to start' });
    const victim = f.dispatches(THREAD)[0]!.worker;
    await victim.kill();

    await f.waitForReplies(THREAD, 1);
    const again = f.dispatches(THREAD)[1]!;
    expect(again.worker).not.toBe(victim);
    expect(again.log).toMatchObject({ type: 'Continuation', deliveries: 2 });
    // The survivor's sweeper handed the thread over because its owner was gone, not because the
    // lease ran out (that would be reported as leasesRevived).
    expect(takeovers(f)).toEqual([expect.objectContaining({ takenOver: 1, leasesRevived: 0 })]);
  });

  it('a worker frozen mid-turn is taken over, then fenced out when it wakes: one reply, one commit', async () => {
    const f = await startFleet({});
    fleet = f;
    await Promise.all([f.spawn(), f.spawn()]);
    await f.send(THREAD, message('long job\n@agent {"delayMs": 3000}'));
    await waitFor(() => f.dispatches(THREAD).length === 1, { what: 'the turn to start' });
    const frozen = f.dispatches(THREAD)[0]!.worker;
    frozen.freeze();

    await f.waitForReplies(THREAD, 1);
    expect(f.dispatches(THREAD)[1]!.worker).not.toBe(frozen);
    await waitFor(async () => (await f.queue.admin.state(THREAD)).status === 'idle', { what: 'the commit' });
    frozen.thaw();
    // Woken, it either finishes its turn and finds its commit fenced, or its renewal fails first.
    const fencedOut = (msg: unknown) =>
      msg === 'fenced out; nothing committed' || String(msg).startsWith('lease lost');
    await waitFor(() => frozen.logs.some((l) => l.level === 40 && fencedOut(l.msg)), {
      what: 'the woken worker to find the thread no longer its',
      timeoutMs: 30_000,
    });
    expect(f.replies(THREAD)).toHaveLength(1);
    expect((await f.queue.admin.history(THREAD)).map((r) => r.status)).toEqual(['complete']);
  });
});
