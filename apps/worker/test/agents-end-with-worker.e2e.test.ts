import { agentProcesses, stillRunning } from '@tributary/acp/process-tree';
import { waitFor } from '@tributary/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Fleet, type FleetWorker, startFleet } from './fleet/fleet.js';
import { message } from './worker-fixture.js';

let fleet: Fleet | undefined;
afterEach(async () => {
  await fleet?.close();
  fleet = undefined;
});

const THREAD = 'gateway:C1:T1';
// An agent like codex-acp, which runs on when its stdin closes, running two tools: a long child in its
// process group, and one in a session of its own as Claude Code's shell commands are. Without the
// warden all three outlive a dead worker; a kill of the agent's group alone misses the second tool.
const STUBBORN = { TRIBUTARY_AGENT_CAPS: JSON.stringify({ outliveStdin: true }) };
const LONG_TOOL = 'long job\n@agent {"delayMs": 20000, "spawnGrandchild": true, "spawnDetached": true}';

/** The process groups of every agent the worker started (each agent leads its own group). */
const agentGroups = (worker: FleetWorker) =>
  worker.logs.filter((l) => l.msg === 'agent process started').map((l) => Number(l.pid));

/** The agent holding the thread's session: the leader of its process group. */
async function sessionGroup(worker: FleetWorker): Promise<number> {
  await waitFor(() => worker.logs.some((l) => l.msg === 'session opened' && l.threadKey === THREAD), {
    what: 'the session to open',
  });
  return Number(worker.logs.find((l) => l.msg === 'session opened' && l.threadKey === THREAD)!.pid);
}

describe('agents never outlive the worker that started them', { timeout: 90_000 }, () => {
  it('SIGKILL of a worker mid-turn: every process of its agents is gone within 2 s; the re-run is the only run', async () => {
    const f = await startFleet(STUBBORN);
    fleet = f;
    await Promise.all([f.spawn(), f.spawn()]);
    await f.send(THREAD, message(LONG_TOOL));
    await waitFor(() => f.dispatches(THREAD).length === 1, { what: 'the turn to start' });
    const victim = f.dispatches(THREAD)[0]!.worker;
    const group = await sessionGroup(victim);
    // Both tools are running: the agent has two descendants.
    const processes = await waitFor(
      () => {
        const found = agentProcesses([group]);
        return found.length === 3 ? found : undefined;
      },
      { what: 'the agent and its two tools' },
    );
    const spares = agentProcesses(agentGroups(victim).filter((pid) => pid !== group));

    const killedAt = performance.now();
    await victim.kill();
    await waitFor(() => stillRunning([...processes, ...spares]).length === 0, {
      what: 'every process of the dead worker’s agents to end',
      timeoutMs: 2_000,
    });
    const goneMs = performance.now() - killedAt;

    await waitFor(() => f.dispatches(THREAD).length === 2, { what: 'the re-run', timeoutMs: 30_000 });
    const rerun = f.dispatches(THREAD)[1]!;
    expect(rerun.worker).not.toBe(victim);
    expect(rerun.log).toMatchObject({ type: 'Continuation', deliveries: 2 });
    expect(goneMs).toBeLessThan(2_000);
  });

  it('a frozen worker: its turn’s agent is killed before another worker takes the thread over', async () => {
    const f = await startFleet(STUBBORN);
    fleet = f;
    await Promise.all([f.spawn(), f.spawn()]);
    await f.send(THREAD, message(LONG_TOOL));
    await waitFor(() => f.dispatches(THREAD).length === 1, { what: 'the turn to start' });
    const frozen = f.dispatches(THREAD)[0]!.worker;
    const group = await sessionGroup(frozen);
    const processes = await waitFor(
      () => {
        const found = agentProcesses([group]);
        return found.length === 3 ? found : undefined;
      },
      { what: 'the agent and its two tools' },
    );
    frozen.freeze();

    // The moment another worker starts the batch, nothing of the frozen worker's turn may still run.
    let aliveAtTakeover: number[] | undefined;
    await waitFor(
      () => {
        if (f.dispatches(THREAD).length < 2) return false;
        aliveAtTakeover = stillRunning(processes);
        return true;
      },
      { what: 'the takeover', timeoutMs: 40_000, intervalMs: 5 },
    );
    expect(aliveAtTakeover).toEqual([]);
    expect(f.dispatches(THREAD)[1]!.worker).not.toBe(frozen);
    frozen.thaw();
    await f.waitForReplies(THREAD, 1);
    await waitFor(() => frozen.logs.some((l) => l.component === 'warden' && l.level === 50), {
      what: 'the warden to say why it killed the agents',
    });
    // A revocation is final: the woken worker hands back what it holds and stops, to be restarted.
    await waitFor(
      () => frozen.logs.some((l) => String(l.msg).startsWith('the agent warden revoked this worker')),
      {
        what: 'the woken worker to stop',
      },
    );
  });
});
