/**
 * Crash takeover: real `tributary worker` processes with the built-in agent; each round starts a long
 * turn, SIGKILLs the worker running it and times how long until another worker dispatches the same
 * batch again (its `Continuation`). The lease length is printed beside it: without presence-based
 * takeover the batch waits for the lease to expire.
 *
 *   npm run bench:takeover [-- --kills 10] [-- --smoke]
 *
 * Ends with `takeover: kills=<n> p50_ms=<x> max_ms=<y> lease_ms=<z>`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
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

const takeovers: number[] = [];
try {
  for (const worker of [startWorker(), startWorker()]) await started(worker);
  for (let i = 1; i <= kills; i++) {
    const thread = `gateway:bench:C1:T${i}`;
    await store.queue.enqueue(
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
    victim.child.kill('SIGKILL');
    workers.splice(workers.indexOf(victim), 1);
    await waitFor(() => dispatches.some((d) => d.thread === thread && d.worker !== victim), {
      what: `turn ${i} re-prompted elsewhere`,
      timeoutMs: 3 * queueDefaults.leaseMs,
    });
    const again = dispatches.find((d) => d.thread === thread && d.worker !== victim)!;
    if (again.type !== 'Continuation') throw new Error(`turn ${i} came back as ${again.type}`);
    takeovers.push(again.at - killedAt);
    log(`takeover: kill ${i}/${kills}: ${Math.round(again.at - killedAt)} ms`);
    // Free the survivor's slot and bring the fleet back to two workers.
    await store.controls.cancelAll(thread);
    await started(startWorker());
  }
} finally {
  for (const worker of workers) worker.child.kill('SIGKILL');
  await store.close();
  await redis.stop();
}

const sorted = takeovers.sort((a, b) => a - b);
process.stdout.write(
  `takeover: kills=${sorted.length} p50_ms=${Math.round(percentile(sorted, 50))} ` +
    `max_ms=${Math.round(sorted.at(-1)!)} lease_ms=${queueDefaults.leaseMs}\n`,
);
await writeBenchResult(values, {
  name: 'takeover',
  title: 'Crash takeover: SIGKILL of the worker running a turn until another worker re-prompts it',
  columns: ['measure', 'ms'],
  rows: [
    ['takeover p50', Math.round(percentile(sorted, 50))],
    ['takeover max', Math.round(sorted.at(-1)!)],
    ['lease', queueDefaults.leaseMs],
  ],
  charts: [{ title: 'Takeover after SIGKILL against the lease (ms)', x: 'measure', y: 'ms' }],
  ratios: {
    takeover_p50_over_lease: rounded(percentile(sorted, 50) / queueDefaults.leaseMs),
  },
  notes: [
    `${sorted.length} kills; two worker processes with the built-in agent; presence TTL ${queueDefaults.presenceTtlMs} ms; without presence a takeover waits out the lease.`,
  ],
});
