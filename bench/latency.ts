/**
 * Idle-thread dispatch latency (invariant I1): enqueue → handler start, against a plain BullMQ
 * add → processor start on the same Redis. Each sample waits until the worker is idle again, so the
 * message finds it blocked in its pop, as an idle thread's message does. The paths take turns in
 * rounds (a two-core machine's speed drifts within a run); percentiles are over all rounds.
 *
 * Tributary is measured twice: a new thread (rung through the shared BullMQ queue) and a thread whose
 * last worker is alive (session affinity hands the doorbell to it). The new thread's path is also split
 * into its steps.
 *
 *   npm run bench:latency [-- --samples 1000] [-- --rounds 5] [-- --smoke]
 */
import { parseArgs } from 'node:util';
import { BullDoorbell, queueConfig, Runner, threadQueue } from '@tributary/queue';
import { startRedis, uniquePrefix } from '@tributary/testkit';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { resultOptions, sizeOption, writeBenchResult } from './bench-result.js';
import { percentile } from './stats.js';

const { values } = parseArgs({
  options: { ...resultOptions, samples: { type: 'string' }, rounds: { type: 'string' } },
});
const samples = sizeOption(values, 'samples', 1000, 50);
const rounds = sizeOption(values, 'rounds', 5, 1);
const perRound = Math.ceil(samples / rounds);
const warmup = Math.ceil(perRound / 10);
// Long enough for the previous sample's turn to end (a commit and an empty claim) on a busy machine.
const IDLE_GAP_MS = 3;
const log = (line: string) => process.stderr.write(`${line}\n`);

/** Resolves the next time `fire()` is called; lets a sample wait for its own handler start. */
function nextSignal() {
  let fire!: (at: number) => void;
  const fired = new Promise<number>((resolve) => {
    fire = resolve;
  });
  return { fired, fire };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One way to dispatch a message: `once` sends sample `i` and resolves with its latency in ms. */
interface Path {
  once(i: number): Promise<number>;
  close(): Promise<void>;
}

/** Runs `perRound` samples (after warm-up ones), each on an idle worker; appends to `into`. */
async function measure(path: Path, into: number[], offset: number): Promise<void> {
  for (let i = 0; i < warmup + perRound; i++) {
    await sleep(IDLE_GAP_MS);
    const ms = await path.once(offset + i);
    if (i >= warmup) into.push(ms);
  }
}

const server = await startRedis();
const redis = new Redis(server.url);

const steps: Record<'toClaim' | 'claim' | 'handler', number[]> = { toClaim: [], claim: [], handler: [] };

/**
 * Tributary on one worker. `thread(i)` names sample i's thread: a new one each time, or the same
 * one, whose last owner (this worker) is alive. `timed` records the steps of the samples.
 */
async function tributary(thread: (i: number) => string, timed: boolean): Promise<Path> {
  const config = queueConfig({ prefix: uniquePrefix('bench') });
  const doorbell = new BullDoorbell(redis, config);
  const queue = threadQueue(redis, config, doorbell);
  // The steps are timed by wrapping this run's own queue; nothing else changes.
  let claimStart = 0;
  let claimEnd = 0;
  const claim = queue.turns.claim.bind(queue.turns);
  queue.turns.claim = async (...args) => {
    claimStart = performance.now();
    const claimed = await claim(...args);
    claimEnd = performance.now();
    return claimed;
  };
  let pending = nextSignal();
  const runner = new Runner({
    queue,
    doorbell,
    connection: redis,
    replies: {
      deliver: async ({ id }) => Promise.reject(new Error(`reply ${id}: these turns commit no replies`)),
    },
    handler: async () => {
      pending.fire(performance.now());
      return { reply: '', stopReason: 'end_turn' };
    },
  });
  await runner.start();
  return {
    async once(i) {
      pending = nextSignal();
      const started = performance.now();
      await queue.intake.enqueue(thread(i), { id: `m${i}`, body: 'ping' });
      const handlerAt = await pending.fired;
      if (timed) {
        steps.toClaim.push(claimStart - started);
        steps.claim.push(claimEnd - claimStart);
        steps.handler.push(handlerAt - claimEnd);
      }
      return handlerAt - started;
    },
    async close() {
      await runner.close();
      await doorbell.close();
    },
  };
}

async function plainBullmq(): Promise<Path> {
  const prefix = uniquePrefix('bull');
  const queue = new Queue('plain', { connection: redis, prefix });
  let pending = nextSignal();
  const connection = redis.duplicate({ maxRetriesPerRequest: null });
  const worker = new Worker('plain', async () => pending.fire(performance.now()), { connection, prefix });
  await worker.waitUntilReady();
  return {
    async once(i) {
      pending = nextSignal();
      const started = performance.now();
      await queue.add('job', { i }, { removeOnComplete: true });
      return (await pending.fired) - started;
    },
    async close() {
      await worker.close();
      await queue.close();
      connection.disconnect();
    },
  };
}

const paths = {
  bull: { path: await plainBullmq(), ms: [] as number[] },
  fresh: { path: await tributary((i) => `bench-thread-${i}`, true), ms: [] as number[] },
  owned: { path: await tributary(() => 'bench-owned-thread', false), ms: [] as number[] },
};
for (let round = 0; round < rounds; round++) {
  for (const { path, ms } of Object.values(paths)) await measure(path, ms, round * (warmup + perRound));
  log(`latency: round ${round + 1}/${rounds} done`);
}
for (const { path } of Object.values(paths)) await path.close();
redis.disconnect();
await server.stop();

const fmt = (n: number) => Number(n.toFixed(2));
const p50 = (ms: number[]) => fmt(percentile(ms, 50));
const p99 = (ms: number[]) => fmt(percentile(ms, 99));
const ratio = (ours: number[], p: number) => fmt(percentile(ours, p) / percentile(paths.bull.ms, p));
const stepRows: [string, number[]][] = [
  ['  step: enqueue → claim starts (the enqueue script, the ring, the worker’s take)', steps.toClaim],
  ['  step: claim script', steps.claim],
  ['  step: claimed → handler', steps.handler],
];
const { fresh, owned, bull } = paths;
process.stdout.write(
  `latency: idle_p50_ms=${p50(fresh.ms)} idle_p99_ms=${p99(fresh.ms)} ` +
    `owned_p50_ms=${p50(owned.ms)} owned_p99_ms=${p99(owned.ms)} ` +
    `bullmq_p50_ms=${p50(bull.ms)} bullmq_p99_ms=${p99(bull.ms)}\n`,
);
await writeBenchResult(values, {
  name: 'latency',
  title: 'Idle dispatch latency: enqueue to handler start on an idle thread',
  columns: ['path', 'p50 (ms)', 'p99 (ms)'],
  rows: [
    ['Tributary: enqueue → turn handler (new thread)', p50(fresh.ms), p99(fresh.ms)],
    ['plain BullMQ: add → processor (baseline)', p50(bull.ms), p99(bull.ms)],
    ['Tributary: enqueue → turn handler (its last worker alive)', p50(owned.ms), p99(owned.ms)],
    ...stepRows.map(([label, ms]) => [label, p50(ms), p99(ms)]),
  ],
  charts: [
    { title: 'p50 (ms)', x: 'path', y: 'p50 (ms)' },
    { title: 'p99 (ms)', x: 'path', y: 'p99 (ms)' },
  ],
  ratios: {
    idle_p50_over_bullmq_p50: ratio(fresh.ms, 50),
    idle_p99_over_bullmq_p99: ratio(fresh.ms, 99),
    owned_p50_over_bullmq_p50: ratio(owned.ms, 50),
    owned_p99_over_bullmq_p99: ratio(owned.ms, 99),
  },
  notes: [
    `${perRound} samples per path and round after ${warmup} warm-up ones, ${rounds} rounds with the paths taking turns, on one local Redis, one worker of one slot each.`,
    `Each sample is sent ${IDLE_GAP_MS} ms after the previous one started its handler, so it finds the worker idle.`,
    'The step rows split the new-thread path of the same samples (p50 and p99 of each step on its own, so they need not add up).',
  ],
});
