import { agentProcesses, stillRunning } from '@tributary/acp/process-tree';
import { workerKeys } from '@tributary/queue/testing';
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

/** The session's agent and its two tools, once both run. */
function toolsOf(group: number): Promise<number[]> {
  return waitFor(
    () => {
      const found = agentProcesses([group]);
      return found.length === 3 ? found : undefined;
    },
    { what: 'the agent and its two tools' },
  );
}

/**
 * A fleet of two stubborn workers, one running the long turn: the fleet, that worker, the process
 * group of its session's agent, and that agent with its tools.
 */
async function longTurnRunning(): Promise<{
  f: Fleet;
  running: FleetWorker;
  group: number;
  processes: number[];
}> {
  const f = await startFleet(STUBBORN);
  fleet = f;
  await Promise.all([f.spawn(), f.spawn()]);
  await f.send(THREAD, message(LONG_TOOL));
  await waitFor(() => f.dispatches(THREAD).length === 1, { what: 'the turn to start' });
  const running = f.dispatches(THREAD)[0]!.worker;
  const group = await sessionGroup(running);
  return { f, running, group, processes: await toolsOf(group) };
}

/** Which of `processes` still ran the moment another worker started the batch (it should be none). */
async function aliveAtTakeover(f: Fleet, processes: number[]): Promise<number[]> {
  let alive: number[] = [];
  await waitFor(
    () => {
      if (f.dispatches(THREAD).length < 2) return false;
      alive = stillRunning(processes);
      return true;
    },
    { what: 'the takeover', timeoutMs: 40_000, intervalMs: 5 },
  );
  return alive;
}

/** The presence key of a fleet worker, by the owner id it logged at start. */
function presenceOf(f: Fleet, worker: FleetWorker): string {
  const owner = String(worker.logs.find((l) => l.msg === 'worker started')!.owner);
  return workerKeys(f.queue.config.prefix, owner).presence;
}

describe('agents never outlive the worker that started them', { timeout: 90_000 }, () => {
  it('SIGKILL of a worker mid-turn: every process of its agents is gone within 2 s; the re-run is the only run', async () => {
    const { f, running: victim, group, processes } = await longTurnRunning();
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

  it('SIGKILL of the worker’s process group: its warden, not in it, kills the agents and withdraws the presence before it could lapse', async () => {
    const { f, running: victim, processes } = await longTurnRunning();
    const presence = presenceOf(f, victim);
    const ttlAtKill = await f.redis.pttl(presence);
    expect(ttlAtKill).toBeGreaterThan(0);

    const killedAt = performance.now();
    victim.signalGroup('SIGKILL');
    await waitFor(() => stillRunning(processes).length === 0, {
      what: 'every process of the dead worker’s agents to end',
    });
    await waitFor(async () => (await f.redis.exists(presence)) === 0, { what: 'the presence withdrawn' });
    // Deleted by the warden, not expired: it went before the TTL it had at the kill ran out.
    expect(performance.now() - killedAt).toBeLessThan(ttlAtKill);
    await waitFor(() => f.dispatches(THREAD).length === 2, { what: 'the re-run', timeoutMs: 30_000 });
    expect(f.dispatches(THREAD)[1]!.worker).not.toBe(victim);
  });

  it('SIGSTOP of the worker’s process group: its warden, not frozen with it, kills the agent before another worker takes over', async () => {
    const { f, running: frozen, processes } = await longTurnRunning();
    frozen.signalGroup('SIGSTOP');
    expect(await aliveAtTakeover(f, processes)).toEqual([]);
    expect(f.dispatches(THREAD)[1]!.worker).not.toBe(frozen);
    frozen.signalGroup('SIGCONT');
  });

  it('a frozen worker: its turn’s agent is killed before another worker takes the thread over', async () => {
    const { f, running: frozen, processes } = await longTurnRunning();
    frozen.freeze();
    // The moment another worker starts the batch, nothing of the frozen worker's turn may still run.
    expect(await aliveAtTakeover(f, processes)).toEqual([]);
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
