import { stillRunning } from '@tributary/acp/process-tree';
import { waitFor } from '@tributary/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Fleet, startFleet } from './fleet/fleet.js';
import { message } from './worker-fixture.js';

let fleet: Fleet | undefined;
afterEach(async () => {
  await fleet?.close();
  fleet = undefined;
});

const KEPT = 'gateway:C1:kept';
const LONG = 'gateway:C1:long';

describe('a thread that moves to another worker', { timeout: 90_000 }, () => {
  it('leaves no agent process behind on the worker it left', async () => {
    const f = await startFleet({ WORKER_CONCURRENCY: '1', AGENT_WARM_SPARES: '0' });
    fleet = f;
    const a = await f.spawn();
    await f.send(KEPT, message('first'));
    await f.waitForReplies(KEPT, 1);
    const opened = a.logs.find((l) => l.msg === 'session opened' && l.threadKey === KEPT)!;
    const keptProcess = Number(opened.pid);

    // A is busy with a long turn when the kept thread rings again, and B has a slot to spare: waiting
    // for A would take longer than moving, so A passes the thread on.
    await f.send(LONG, message('long job\n@agent {"delayMs": 20000}'));
    await waitFor(() => f.dispatches(LONG).length === 1, { what: 'the long turn on A' });
    const b = await f.spawn();
    await f.send(KEPT, message('second'));
    await f.waitForReplies(KEPT, 2);
    expect(f.dispatches(KEPT).map((d) => d.worker)).toEqual([a, b]);

    await waitFor(() => stillRunning([keptProcess]).length === 0, {
      what: 'the kept thread’s old agent process on A to end',
    });
    expect(
      a.logs.some((l) => l.msg === 'session dropped' && l.threadKey === KEPT && l.reason === 'released'),
    ).toBe(true);
  });
});
