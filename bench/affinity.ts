/**
 * Session reuse under session affinity (docs/adr/0007): workers in this process (real Redis, the
 * built-in agent over stdio, a shared agent state directory) serve many active threads, one message
 * at a time each, with a pause between a reply and the next message. A turn is reused when it ran on
 * the live session its worker already held. The same run with affinity off is the baseline. Every
 * thread's first turn opens its session in both runs and is left out of the ratio.
 *
 *   npm run bench:affinity [-- --workers 3 --threads 200 --turns 15 --think-ms 1000] [-- --smoke]
 *
 * Ends with `affinity: reuse_ratio=<x> baseline_reuse_ratio=<y>`; exits non-zero on any failed turn.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { builtInAgentCommand } from '@tributary/agent';
import { loadWorkerConfig } from '@tributary/config';
import { type ArrivalEvent, queuedArrival } from '@tributary/packing';
import { startRedis, uniquePrefix } from '@tributary/testkit';
import { type RunningWorker, startWorker } from '@tributary/worker';
import { pino } from 'pino';
import { resultOptions, sizeOption, writeBenchResult } from './bench-result.js';
import { rounded } from './stats.js';

const { values } = parseArgs({
  options: {
    ...resultOptions,
    workers: { type: 'string' },
    threads: { type: 'string' },
    turns: { type: 'string' },
    'think-ms': { type: 'string' },
  },
});
// A smoke run: two workers, as many threads as one worker runs at once, two turns each, in seconds.
const workerCount = sizeOption(values, 'workers', 3, 2);
const threadCount = sizeOption(values, 'threads', 200, 8);
const turnsPerThread = sizeOption(values, 'turns', 15, 2);
const thinkMs = sizeOption(values, 'think-ms', 1000, 50);

const log = (line: string) => process.stderr.write(`${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface RunResult {
  turns: number;
  live: number;
  failures: number;
  paths: Record<string, number>;
  seconds: number;
}

const redis = await startRedis();

async function run(label: string, affinity: boolean): Promise<RunResult> {
  const prefix = uniquePrefix(`aff${label}`);
  const stateDir = await mkdtemp(join(tmpdir(), 'tributary-bench-agent-'));
  let measuring = false;
  const paths: Record<string, number> = {};
  let failures = 0;
  const waiting = new Map<string, () => void>();
  // Only dispatch records matter; everything else the workers log is dropped unparsed.
  const destination = {
    write(line: string) {
      if (!measuring || !line.includes('"msg":"dispatch"')) return;
      const path = String((JSON.parse(line) as { sessionPath: string }).sessionPath);
      paths[path] = (paths[path] ?? 0) + 1;
    },
  };
  const config = loadWorkerConfig({
    REDIS_URL: redis.url,
    REDIS_PREFIX: prefix,
    WORKER_CONCURRENCY: '8',
    METRICS_PORT: '0',
    SHUTDOWN_GRACE_MS: '0',
    AGENT_MAX_SESSIONS: String(threadCount),
    SESSION_AFFINITY: affinity ? 'on' : 'off',
    LOG_LEVEL: 'info',
  });
  const workers: RunningWorker[] = [];
  for (let i = 0; i < workerCount; i++) {
    workers.push(
      await startWorker(config, {
        logger: pino({ level: 'info' }, destination),
        builtInAgent: builtInAgentCommand(),
        agentEnv: { TRIBUTARY_AGENT_STATE_DIR: stateDir },
        sinks: [
          {
            name: 'bench',
            send: async (message) => {
              if (message.kind !== 'reply') failures++;
              waiting.get(message.thread)?.();
            },
          },
        ],
      }),
    );
  }
  const queue = workers[0]!.queue;

  let sent = 0;
  async function turn(thread: string): Promise<void> {
    const n = sent++;
    const event: ArrivalEvent = {
      eventId: `${label}-${n}`,
      platform: 'gateway',
      channelId: 'C1',
      threadId: thread,
      sender: { id: 'U1', name: 'ada', displayName: 'Ada', isBot: false },
      timestamp: new Date().toISOString(),
      text: `message ${n}`,
      attachments: [],
    };
    const replied = new Promise<void>((resolve) => waiting.set(`gateway:C1:${thread}`, resolve));
    await queue.intake.enqueue(
      `gateway:C1:${thread}`,
      queuedArrival(event, `gateway:C1:${thread}:${event.eventId}`),
    );
    await Promise.race([
      replied,
      sleep(60_000).then(() => {
        failures++;
      }),
    ]);
  }

  const threads = Array.from({ length: threadCount }, (_, i) => `T${i}`);
  log(`affinity: ${label}: ${workerCount} workers, ${threadCount} threads, opening their sessions`);
  await Promise.all(threads.map(turn));
  measuring = true;
  const started = performance.now();
  let done = 0;
  const progress = setInterval(
    () => log(`affinity: ${label}: ${done}/${threadCount * turnsPerThread} turns`),
    5_000,
  );
  await Promise.all(
    threads.map(async (thread) => {
      for (let i = 0; i < turnsPerThread; i++) {
        await sleep(Math.random() * 2 * thinkMs);
        await turn(thread);
        done++;
      }
    }),
  );
  clearInterval(progress);
  const seconds = (performance.now() - started) / 1000;
  for (const thread of threads) failures += (await queue.admin.deadLetters(`gateway:C1:${thread}`)).length;
  await Promise.all(workers.map((worker) => worker.close()));
  await rm(stateDir, { recursive: true, force: true });
  const turns = Object.values(paths).reduce((sum, n) => sum + n, 0);
  const result = { turns, live: paths.live ?? 0, failures, paths, seconds };
  log(
    `affinity: ${label}: ${turns} turns in ${seconds.toFixed(1)} s, session paths ${JSON.stringify(paths)}, failures=${failures}`,
  );
  return result;
}

const withAffinity = await run('on', true);
const baseline = await run('off', false);
await redis.stop();

const ratio = (r: RunResult) => (r.turns === 0 ? 0 : r.live / r.turns).toFixed(3);
process.stdout.write(
  `affinity: reuse_ratio=${ratio(withAffinity)} baseline_reuse_ratio=${ratio(baseline)}\n`,
);
await writeBenchResult(values, {
  name: 'affinity',
  title: 'Session reuse with session affinity against without',
  columns: ['affinity', 'turns', 'on the live session', 'reuse ratio', 'failures', 'seconds'],
  rows: [withAffinity, baseline].map((r, i) => [
    i === 0 ? 'on' : 'off (baseline)',
    r.turns,
    r.live,
    Number(ratio(r)),
    r.failures,
    rounded(r.seconds, 1),
  ]),
  ratios: { reuse_ratio: Number(ratio(withAffinity)), baseline_reuse_ratio: Number(ratio(baseline)) },
  notes: [
    `${workerCount} workers, ${threadCount} threads, ${turnsPerThread} turns each, think time up to ${2 * thinkMs} ms.`,
  ],
});
process.exit(withAffinity.failures + baseline.failures === 0 ? 0 : 1);
