/**
 * Fair shares between routes (docs/adr/0062, 0063): while one route floods the fleet with threads, a
 * quiet route's messages are dispatched about as fast as when it is alone. Runners in processes of
 * their own, as a pool's workers are (bench/fleet/fair-runner.ts: real Redis, real BullMQ doorbells,
 * the worker's own route turn slots), serve two routes: `flood`, whose threads arrive in waves, each
 * thread taking another message after each turn, limited to `--flood-limit` turns at once across the
 * fleet; and `quiet`, one thread that gets a message a second. The quiet route's messages come from
 * this process, the flood's from a process of its own (bench/fleet/enqueuer.ts), as from an ingress.
 * A message's dispatch time runs from its acceptance to its turn's start (the claim). Before each run
 * measures, every runner serves `--warm-messages` messages of the quiet route, so that each run
 * measures warm code.
 * Turns sleep instead of prompting an agent: agent start-up is not dispatch, and would only add noise.
 * Three runs on one Redis, taking turns for `--rounds` rounds:
 *
 *   alone  the quiet route only: the baseline;
 *   fair   beside the flood, each route's doorbells in its own line, held back by its turn limit (as
 *          shipped);
 *   fifo   beside the flood, its line weighed to let every doorbell in at once and blind to its turn
 *          limit: first in, first out, as the shared queue was before route lines.
 *
 *   npm run bench:route-fairness [-- --flood-threads 500 --flood-waves 5 --quiet-messages 120 --rounds 3
 *                                   --warm-messages 2000]
 *                                [-- --smoke]
 *
 * Ends with `route-fairness: fair_p99_over_alone_p99=<x> fifo_p99_over_alone_p99=<y>` and whether the
 * fair run is within 1.2 times the alone run; exits non-zero on a turn that failed.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Store } from '@tributary/queue';
import { startRedis, uniquePrefix, waitFor } from '@tributary/testkit';
import { resultOptions, sizeOption, writeBenchResult } from './bench-result.js';
import type { RunnerReport } from './fleet/fair-runner.js';
import { percentile, rounded } from './stats.js';

const { values } = parseArgs({
  options: {
    ...resultOptions,
    runners: { type: 'string' },
    concurrency: { type: 'string' },
    'flood-threads': { type: 'string' },
    'flood-waves': { type: 'string' },
    'flood-limit': { type: 'string' },
    'turn-ms': { type: 'string' },
    'quiet-messages': { type: 'string' },
    rounds: { type: 'string' },
    'warm-messages': { type: 'string' },
  },
});
const runnerCount = sizeOption(values, 'runners', 4, 2);
const concurrency = sizeOption(values, 'concurrency', 4, 4);
const floodThreads = sizeOption(values, 'flood-threads', 500, 40);
const floodWaves = sizeOption(values, 'flood-waves', 5, 2);
const floodLimit = sizeOption(values, 'flood-limit', 12, 6);
const turnMs = sizeOption(values, 'turn-ms', 1_000, 200);
const quietMessages = sizeOption(values, 'quiet-messages', 120, 6);
const rounds = sizeOption(values, 'rounds', 3, 1);
const warmMessages = sizeOption(values, 'warm-messages', 2_000, 64);
const WARM_AT_ONCE = 16;
const QUIET_EVERY_MS = 1_000;
/** The routes issue's criterion: the quiet route's p99 beside the flood, over its p99 alone. */
const WITHIN = 1.2;

const log = (line: string) => process.stderr.write(`${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Mode = 'alone' | 'fair' | 'fifo';

interface RunResult {
  mode: Mode;
  /** The quiet route's dispatch times, ms. */
  quietMs: number[];
  /** Those of messages accepted within a second of a flood wave's start. */
  inWaveMs: number[];
  floodTurns: number;
  failures: number;
}

const redis = await startRedis({ private: true });
const QUIET_CHANNEL = 'gateway:C-quiet:';
const QUIET = `${QUIET_CHANNEL}quiet`;
/** Threads of the quiet route that warm every runner up before a run measures. */
const warmThread = (i: number) => `${QUIET_CHANNEL}warm-${i}`;
const floodThread = (i: number) => `gateway:C-flood:flood-${i}`;

async function run(mode: Mode): Promise<RunResult> {
  const prefix = uniquePrefix(`fair${mode}`);
  const quietMs: number[] = [];
  const inWaveMs: number[] = [];
  let waveAt = Number.NEGATIVE_INFINITY;
  let floodTurns = 0;
  let failures = 0;
  let flooding = true;
  let warmed = 0;
  // Without session affinity, as the runners (bench/fleet/fair-runner.ts).
  const store = Store.open({
    url: redis.url,
    connection: { kind: 'patient' },
    queue: { prefix, affinity: false },
  });
  // As ingress publishes the route table and records each thread's route (docs/adr/0058, 0062, 0063).
  // First in, first out, as before lines: every doorbell let in at once, and the turn limit kept
  // under a name the line does not know, so that it cannot hold the flood back (docs/adr/0064).
  const limited = mode === 'fifo' ? 'flood-turns' : 'flood';
  await store.turnLimits.publishTable(new Map([[limited, floodLimit]]));
  if (mode === 'fifo') await store.routeLines.publishWeights(new Map([['flood', floodThreads]]));
  const record = (route: string) => JSON.stringify({ route, profile: {} });
  for (let i = 0; i < floodThreads; i++) await store.routes.note(floodThread(i), record('flood'));
  for (const thread of [QUIET, ...Array.from({ length: WARM_AT_ONCE }, (_, i) => warmThread(i))]) {
    await store.routes.note(thread, record('quiet'));
  }
  let sent = 0;
  const send = (thread: string) => store.queue.intake.enqueue(thread, { id: `m${sent++}`, body: 'x' });
  const enqueuer = fork(fileURLToPath(new URL('fleet/enqueuer.ts', import.meta.url)), {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, ENQUEUER_REDIS_URL: redis.url, ENQUEUER_PREFIX: prefix },
  });
  await once(enqueuer, 'message');
  const flood = (threads: string[]) => {
    if (flooding) enqueuer.send(threads);
  };

  const runners = Array.from({ length: runnerCount }, () => {
    const child = fork(fileURLToPath(new URL('fleet/fair-runner.ts', import.meta.url)), {
      execArgv: ['--import', 'tsx'],
      env: {
        ...process.env,
        FAIR_REDIS_URL: redis.url,
        FAIR_PREFIX: prefix,
        FAIR_CONCURRENCY: String(concurrency),
        FAIR_TURN_MS: String(turnMs),
        FAIR_LIMITED_ROUTE: limited,
        FAIR_QUIET_CHANNEL: QUIET_CHANNEL,
      },
    });
    child.on('message', (message: RunnerReport) => {
      if (message.kind === 'quiet' && message.thread !== QUIET) warmed++;
      else if (message.kind === 'quiet') {
        const ms = message.dispatchedAt - message.acceptedAt;
        quietMs.push(ms);
        if (message.acceptedAt - waveAt < 1_000) inWaveMs.push(ms);
      } else if (message.kind === 'flood') {
        floodTurns++;
        flood([message.thread]);
      } else if (message.kind === 'failed') failures++;
    });
    return child;
  });
  const said = (child: ChildProcess, kind: RunnerReport['kind']) =>
    new Promise<void>((resolve, reject) => {
      child.on('message', (message: RunnerReport) => void (message.kind === kind && resolve()));
      // A runner that died says so here, instead of the run waiting for it for ever.
      child.on('exit', (code) => reject(new Error(`a runner exited (${code}) before it said ${kind}`)));
    });
  await Promise.all(runners.map((child) => said(child, 'ready')));

  // Each runner's dispatch code is compiled hot before a run measures, as a worker's is after a
  // while: else the alone run, whose runners each see a message every few seconds, measures V8's
  // warm-up, and the others, whose runners the flood warms, look faster than alone.
  for (let sent = 0; sent < warmMessages; sent += WARM_AT_ONCE) {
    await Promise.all(Array.from({ length: WARM_AT_ONCE }, (_, i) => send(warmThread(i))));
    await waitFor(() => warmed >= sent + WARM_AT_ONCE, { what: 'the warm-up messages dispatched' });
  }
  await send(QUIET);
  await waitFor(() => quietMs.length === 1, { what: 'a first quiet message dispatched' });
  quietMs.length = 0;
  inWaveMs.length = 0;
  log(`route-fairness: ${mode}: ${quietMessages} quiet messages a second apart`);
  const waves =
    mode === 'alone'
      ? Promise.resolve()
      : (async () => {
          // The flood arrives in waves spread over the quiet messages, each wave's threads at once.
          const size = Math.ceil(floodThreads / floodWaves);
          const gap = (quietMessages * QUIET_EVERY_MS) / floodWaves;
          for (let wave = 0; wave < floodWaves && flooding; wave++) {
            const from = wave * size;
            const threads = Array.from({ length: Math.min(size, floodThreads - from) }, (_, i) => from + i);
            waveAt = Date.now();
            flood(threads.map(floodThread));
            log(`route-fairness: ${mode}: flood wave ${wave + 1} of ${floodWaves} sent`);
            await sleep(gap);
          }
        })();
  for (let i = 0; i < quietMessages; i++) {
    // Off the waves' beat, so that some messages land in a wave and some between.
    await sleep(QUIET_EVERY_MS * (0.5 + Math.random()));
    await send(QUIET);
  }
  await waitFor(() => quietMs.length === quietMessages, { what: 'every quiet message dispatched' });
  flooding = false;
  await waves;
  enqueuer.disconnect();
  await Promise.all(
    runners.map((child) => {
      const stopped = said(child, 'stopped');
      child.send('stop');
      return stopped;
    }),
  );
  await store.close();
  const p99 = quietMs.length > 0 ? percentile(quietMs, 99) : Number.NaN;
  log(
    `route-fairness: ${mode}: quiet p50 ${percentile(quietMs, 50)} p90 ${percentile(quietMs, 90)} p99 ${p99} ms over ${quietMs.length} messages, ${floodTurns} flood turns, ${failures} failed`,
  );
  return { mode, quietMs, inWaveMs, floodTurns, failures };
}

// The runs take turns, round after round, so that what else the machine does at a time (a
// collection, a neighbour) falls on each alike; each mode's messages are pooled over its rounds.
const modes: Mode[] = ['alone', 'fair', 'fifo'];
const results = modes.map(
  (mode): RunResult => ({ mode, quietMs: [], inWaveMs: [], floodTurns: 0, failures: 0 }),
);
for (let round = 1; round <= rounds; round++) {
  log(`route-fairness: round ${round} of ${rounds}`);
  for (const pooled of results) {
    const one = await run(pooled.mode);
    pooled.quietMs.push(...one.quietMs);
    pooled.inWaveMs.push(...one.inWaveMs);
    pooled.floodTurns += one.floodTurns;
    pooled.failures += one.failures;
  }
}
await redis.stop();

const [alone, fair, fifo] = results as [RunResult, RunResult, RunResult];
const p = (r: RunResult, q: number) => percentile(r.quietMs, q);
const ratio = (r: RunResult) => rounded(p(r, 99) / p(alone, 99), 2);
const verdict = ratio(fair) <= WITHIN ? 'within' : 'NOT within';
process.stdout.write(
  `route-fairness: fair_p99_over_alone_p99=${ratio(fair)} fifo_p99_over_alone_p99=${ratio(fifo)} (fair ${verdict} ${WITHIN}x)\n`,
);
await writeBenchResult(values, {
  name: 'route-fairness',
  title: "A quiet route's dispatch beside a flooding route, against alone",
  columns: [
    'run',
    'quiet p50 ms',
    'quiet p99 ms',
    'quiet max ms',
    'p99 over alone',
    'max within 1 s of a wave, ms',
    'flood turns',
    'failed',
  ],
  rows: results.map((r) => [
    r.mode,
    rounded(p(r, 50), 1),
    rounded(p(r, 99), 1),
    rounded(Math.max(...r.quietMs), 1),
    ratio(r),
    r.inWaveMs.length > 0 ? rounded(Math.max(...r.inWaveMs), 1) : 'none',
    r.floodTurns,
    r.failures,
  ]),
  charts: [{ title: "Quiet route's dispatch p99 (ms)", x: 'run', y: 'quiet p99 ms' }],
  ratios: {
    fair_p99_over_alone_p99: ratio(fair),
    fifo_p99_over_alone_p99: ratio(fifo),
    // A short run may have no quiet message within a second of a wave.
    ...(fifo.inWaveMs.length > 0 && fair.inWaveMs.length > 0
      ? { fifo_wave_max_over_fair: rounded(Math.max(...fifo.inWaveMs) / Math.max(...fair.inWaveMs), 2) }
      : {}),
  },
  notes: [
    `${runnerCount} runner processes of ${concurrency} slots, each run after ${warmMessages} warm-up messages; the flood: ${floodThreads} threads in ${floodWaves} waves, at most ${floodLimit} turns at once, ${turnMs} ms a turn, a new message after each; the quiet route: one thread, a message about a second.`,
    `${rounds} rounds of the three runs in turn, ${quietMessages} quiet messages each: every figure is over the ${rounds * quietMessages} messages of a run's rounds, and the flood turns are summed.`,
    'The max within 1 s of a wave is the slowest quiet message accepted less than a second after a wave of the flood began: what waited behind the wave.',
    'Dispatch: from acceptance to the claim. Session affinity is off, so every doorbell goes through the shared queue; fifo weighs the flood to let all its doorbells in at once.',
  ],
});
process.exit(results.some((r) => r.failures > 0) ? 1 : 0);
