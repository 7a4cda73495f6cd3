import { agentProcesses, stillRunning } from '@tributary/acp/process-tree';
import { keysOf } from '@tributary/queue/testing';
import { waitFor } from '@tributary/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { message, startHarness, type WorkerHarness } from './worker-fixture.js';

let h: WorkerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('a worker that loses a thread’s lease', () => {
  it('kills that turn’s agent at once, tools included, instead of asking it to cancel', async () => {
    // A cancel that waits a minute, and a lease that lets the thread come back at least 6.6 s after the
    // loss is seen (a renewal every third of the lease): what ends the agent before then is the kill.
    h = await startHarness(
      { CANCEL_TIMEOUT_MS: '60000' },
      { leaseMs: 10_000 },
      { agentEnv: { TRIBUTARY_AGENT_CAPS: '{"outliveStdin": true}' } },
    );
    await h.send(
      'th',
      message(
        'long job\n@agent {"delayMs": 20000, "spawnGrandchild": true, "spawnDetached": true, "ignoreCancel": true}',
      ),
    );
    await waitFor(() => h!.worker.pool.pidOf('th'), { what: 'the session' });
    const group = h.worker.pool.pidOf('th')!;
    await waitFor(() => h!.logs.some((l) => l.msg === 'dispatch'), { what: 'the turn to start' });
    const processes = await waitFor(
      () => {
        const found = agentProcesses([group]);
        return found.length === 3 ? found : undefined;
      },
      { what: 'the agent and its two tools' },
    );

    // Another owner's claim: the next renewal finds a fence that is not ours.
    await h.redis.hincrby(keysOf(h.worker.queue, 'th').state, 'fence', 1);
    await waitFor(() => h!.logs.some((l) => String(l.msg).startsWith('lease lost')), {
      what: 'the lease loss',
    });
    // The agent ignores cancel: only a kill ends it, and it must not wait for the cancel timeout.
    await waitFor(() => stillRunning(processes).length === 0, {
      what: 'the agent and its tool to end',
      timeoutMs: 15_000,
    });
    // Not the thread's return to this worker, which drops the session it ran in.
    expect(h.logs.filter((l) => l.msg === 'session dropped')).toEqual([]);
    expect(
      h.logs.some(
        (l) => l.msg === 'killing the agent of a thread leaving this worker' && l.threadKey === 'th',
      ),
    ).toBe(true);
  });
});
