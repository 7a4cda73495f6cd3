/**
 * Crash takeover: real `tributary worker` processes with the built-in agent; each round starts a long
 * turn, kills the worker running it and times how long until another worker dispatches the same batch
 * again (its `Continuation`). Three ways to die, `--kills` rounds each: SIGKILL of the worker process
 * (its warden notices at once), SIGKILL of its whole process group (the warden, in a group of its own,
 * still notices), and SIGKILL of the worker, its warden and its agents together, as when a container is
 * OOM-killed or a node is lost (nothing is left to act for the worker: its presence must lapse, within
 * WORKER_PRESENCE_TTL_MS). The lease length is printed beside them: without presence-based takeover
 * the batch waits for the lease to expire.
 *
 *   npm run bench:takeover [-- --kills 10] [-- --smoke]
 *
 * Ends with `takeover: kills=<n> p50_ms=<x> max_ms=<y> group_p50_ms=<x> all_p50_ms=<x> lease_ms=<z>`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { agentProcesses } from '@tributary/acp/process-tree';
import { loadWorkerConfig } from '@tributary/config';
import { queuedArrival } from '@tributary/packing';
import { queueDefaults, Store } from '@tributary/queue';
import { startRedis, uniquePrefix, waitFor } from '@tributary/testkit';
import { resultOptions, sizeOption, writeBenchResult } from './bench-result.js';
import { onLogLines } from './log-lines.js';
import { percentile, rounded } from './stats.js';

const { values } = parseArgs({ options: { ...resultOptions, kills: { type: 'string' } } });
const kills = sizeOption(values, 'kills', 10, 1);
const log = (line: string) => process.stderr.write(`${line}\n`);
const bin = fileURLToPath(new URL('../apps/cli/bin/tributary.js', import.meta.url));

interface Dispatch {
  worker: Worker;
  thread: string;
  type: string;
  at: number;
}

interface Worker {
  readonly name: string;
  readonly child: ChildProcess;
  started: boolean;
}

const redis = await startRedis();
const prefix = uniquePrefix('takeover');
const store = Store.open({ url: redis.url, connection: { kind: 'patient' }, queue: { prefix } });
const dispatches: Dispatch[] = [];
const workers: Worker[] = [];
let spawned = 0;

function startWorker(): Worker {
  const child = spawn(process.execPath, [bin, 'worker'], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      REDIS_URL: redis.url,
      REDIS_PREFIX: prefix,
      METRICS_PORT: '0',
      SHUTDOWN_GRACE_MS: '0',
      LOG_LEVEL: 'info',
      // The long turn is an `@agent` directive, which the built-in agent obeys only when told to.
      AGENT_ENV: 'TRIBUTARY_AGENT_SCRIPTING',
      TRIBUTARY_AGENT_SCRIPTING: 'on',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
    // A process group of its own, as a service manager starts it: the group can be killed whole.
    detached: true,
  });
  const worker: Worker = { name: `w${++spawned}`, child, started: false };
  onLogLines(child.stdout!, (line) => {
    if (line.includes('"worker started"')) worker.started = true;
    if (!line.includes('"msg":"dispatch"')) return;
    const entry = JSON.parse(line) as { thread: string; type: string };
    dispatches.push({ worker, thread: entry.thread, type: entry.type, at: performance.now() });
  });
  workers.push(worker);
  return worker;
}

async function started(worker: Worker): Promise<void> {
  await waitFor(() => worker.started, { what: `${worker.name} to start`, timeoutMs: 30_000 });
}

/** How a round kills the worker running its turn. */
const KILLS = {
  worker: (worker: Worker) => worker.child.kill('SIGKILL'),
  group: (worker: Worker) => process.kill(-worker.child.pid!, 'SIGKILL'),
  // Everything the worker started goes with it: the warden and the agents, each in a group of its own.
  all: (worker: Worker) => {
    const everything = agentProcesses([worker.child.pid!]);
    process.kill(-worker.child.pid!, 'SIGKILL');
    for (const pid of everything) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch (error) {
        // Gone since the listing (its warden killed it, a spare ended): as good as killed.
        if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
      }
    }
  },
} as const;
type Kill = keyof typeof KILLS;

const takeovers: Record<Kill, number[]> = { worker: [], group: [], all: [] };
const rounds = (Object.keys(KILLS) as Kill[]).flatMap((kill) => Array.from({ length: kills }, () => kill));
try {
  for (const worker of [startWorker(), startWorker()]) await started(worker);
  for (const [index, kill] of rounds.entries()) {
    const i = index + 1;
    const thread = `gateway:bench:C1:T${i}`;
    await store.queue.intake.enqueue(
      thread,
      queuedArrival(
        {
          eventId: `takeover-${i}`,
          platform: 'gateway',
          channelId: 'C1',
          threadId: `T${i}`,
          sender: { id: 'U1', name: 'ada', displayName: 'Ada', isBot: false },
          timestamp: new Date().toISOString(),
          // Longer than the lease: a re-prompt sooner than the lease can only come from takeover.
          text: `long turn\n@agent {"delayMs": ${2 * queueDefaults.leaseMs}}`,
          attachments: [],
        },
        `${thread}:takeover-${i}`,
      ),
    );
    await waitFor(() => dispatches.some((d) => d.thread === thread), { what: `turn ${i} to start` });
    const victim = dispatches.find((d) => d.thread === thread)!.worker;
    const killedAt = performance.now();
    KILLS[kill](victim);
    workers.splice(workers.indexOf(victim), 1);
    await waitFor(() => dispatches.some((d) => d.thread === thread && d.worker !== victim), {
      what: `turn ${i} re-prompted elsewhere`,
      timeoutMs: 3 * queueDefaults.leaseMs,
    });
    const again = dispatches.find((d) => d.thread === thread && d.worker !== victim)!;
    if (again.type !== 'Continuation') throw new Error(`turn ${i} came back as ${again.type}`);
    takeovers[kill].push(again.at - killedAt);
    log(`takeover: kill ${i}/${rounds.length} (${kill}): ${Math.round(again.at - killedAt)} ms`);
    // Free the survivor's slot and bring the fleet back to two workers.
    await store.controls.cancelAll(thread);
    await started(startWorker());
  }
} finally {
  // A stop, not a kill: each worker tells its warden goodbye, so none is left behind to retry a Redis
  // that is gone.
  await Promise.all(
    workers.map(async (worker) => {
      if (worker.child.exitCode !== null || worker.child.signalCode !== null) return;
      worker.child.kill('SIGTERM');
      await once(worker.child, 'exit');
    }),
  );
  await store.close();
  await redis.stop();
}

const p50 = (kill: Kill) => Math.round(percentile(takeovers[kill], 50));
const max = (kill: Kill) => Math.round(Math.max(...takeovers[kill]));
const presenceTtlMs = loadWorkerConfig({}).presenceTtlMs;
process.stdout.write(
  `takeover: kills=${takeovers.worker.length} p50_ms=${p50('worker')} max_ms=${max('worker')} ` +
    `group_p50_ms=${p50('group')} all_p50_ms=${p50('all')} lease_ms=${queueDefaults.leaseMs}\n`,
);
await writeBenchResult(values, {
  name: 'takeover',
  title: 'Crash takeover: SIGKILL of the worker running a turn until another worker re-prompts it',
  columns: ['measure', 'ms'],
  rows: [
    ['takeover p50', p50('worker')],
    ['takeover max', max('worker')],
    ['group kill p50', p50('group')],
    ['group kill max', max('group')],
    ['with its warden and agents p50', p50('all')],
    ['with its warden and agents max', max('all')],
    ['presence TTL', presenceTtlMs],
    ['lease', queueDefaults.leaseMs],
  ],
  charts: [
    { title: 'Takeover after SIGKILL against the presence TTL and the lease (ms)', x: 'measure', y: 'ms' },
  ],
  ratios: {
    takeover_p50_over_lease: rounded(p50('worker') / queueDefaults.leaseMs),
    all_max_over_presence_ttl: rounded(max('all') / presenceTtlMs),
  },
  notes: [
    `${takeovers.worker.length} kills of each kind; two worker processes with the built-in agent, each in a process group of its own; without presence a takeover waits out the lease.`,
    'worker: SIGKILL of the worker process; group kill: SIGKILL of its process group (its warden and agents are in groups of their own); with its warden and agents: all of them SIGKILLed at once, as an OOM-killed container, so the presence must lapse.',
  ],
});
