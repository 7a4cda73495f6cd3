/**
 * Idle-thread dispatch latency (invariant I1): enqueue → handler start, against a plain BullMQ
 * add → processor start measured in the same run on the same Redis. Tributary's path is also split
 * into its steps (median of each), which shows where the time beyond BullMQ's hop goes: the enqueue
 * script before the doorbell is added and the claim script after it is taken, a round trip each.
 *
 *   npm run bench:latency [-- --samples 1000] [-- --smoke]
 */
import { parseArgs } from 'node:util';
import { BullDoorbell, queueConfig, ThreadQueue, TurnRunner } from '@tributary/queue';
import { startRedis, uniquePrefix } from '@tributary/testkit';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { resultOptions, sizeOption, writeBenchResult } from './bench-result.js';
import { percentile } from './stats.js';

const { values } = parseArgs({ options: { ...resultOptions, samples: { type: 'string' } } });
const samples = sizeOption(values, 'samples', 1000, 50);
const warmup = Math.ceil(samples / 10);
const log = (line: string) => process.stderr.write(`${line}\n`);

/** Resolves the next time `signal()` is called; lets a sample wait for its own handler start. */
function nextSignal() {
  let fire!: (at: number) => void;
  const fired = new Promise<number>((resolve) => {
    fire = resolve;
  });
  return { fired, fire };
}

async function measure(label: string, once: (i: number) => Promise<number>): Promise<number[]> {
  const result: number[] = [];
  for (let i = 0; i < warmup + samples; i++) {
    const ms = await once(i);
    if (i >= warmup) result.push(ms);
    if (i > 0 && i % 500 === 0) log(`latency: ${label} ${i}/${warmup + samples}`);
  }
  return result.sort((a, b) => a - b);
}

const server = await startRedis();
const redis = new Redis(server.url);

/** When each step of one Tributary sample began or ended (ms, performance.now()). */
interface Steps {
  ringStart: number;
  claimStart: number;
  claimEnd: number;
}

const stepDurations: Record<'script' | 'doorbell' | 'claim' | 'handler', number[]> = {
  script: [],
  doorbell: [],
  claim: [],
  handler: [],
};

async function tributary(): Promise<number[]> {
  const config = queueConfig({ prefix: uniquePrefix('bench') });
  const doorbell = new BullDoorbell(redis, config);
  const queue = new ThreadQueue(redis, config, doorbell);
  // The steps are timed by wrapping this run's own doorbell and queue; nothing else changes.
  const steps: Steps = { ringStart: 0, claimStart: 0, claimEnd: 0 };
  const ring = doorbell.ring.bind(doorbell);
  doorbell.ring = (...args) => {
    steps.ringStart = performance.now();
    return ring(...args);
  };
  const claim = queue.claim.bind(queue);
  queue.claim = async (...args) => {
    steps.claimStart = performance.now();
    const claimed = await claim(...args);
    steps.claimEnd = performance.now();
    return claimed;
  };
  let pending = nextSignal();
  const runner = new TurnRunner({
    queue,
    doorbell,
    connection: redis,
    handler: async () => {
      pending.fire(performance.now());
      return { reply: '', stopReason: 'end_turn' };
    },
  });
  await runner.start();
  const result = await measure('tributary', async (i) => {
    pending = nextSignal();
    const started = performance.now();
    // A new thread each time: always idle, so this is the path a first message takes.
    await queue.enqueue(`bench-thread-${i}`, { id: `m${i}`, body: 'ping' });
    const handlerAt = await pending.fired;
    if (i >= warmup) {
      stepDurations.script.push(steps.ringStart - started);
      stepDurations.doorbell.push(steps.claimStart - steps.ringStart);
      stepDurations.claim.push(steps.claimEnd - steps.claimStart);
      stepDurations.handler.push(handlerAt - steps.claimEnd);
    }
    return handlerAt - started;
  });
  await runner.close();
  await doorbell.close();
  return result;
}

async function plainBullmq(): Promise<number[]> {
  const prefix = uniquePrefix('bull');
  const queue = new Queue('plain', { connection: redis, prefix });
  let pending = nextSignal();
  const connection = redis.duplicate({ maxRetriesPerRequest: null });
  const worker = new Worker('plain', async () => pending.fire(performance.now()), { connection, prefix });
  await worker.waitUntilReady();
  const result = await measure('bullmq', async (i) => {
    pending = nextSignal();
    const started = performance.now();
    await queue.add('job', { i }, { removeOnComplete: true });
    return (await pending.fired) - started;
  });
  await worker.close();
  await queue.close();
  connection.disconnect();
  return result;
}

const bull = await plainBullmq();
const ours = await tributary();
redis.disconnect();
await server.stop();

const fmt = (n: number) => n.toFixed(2);
const stepRows: [string, number[]][] = [
  ['  step: enqueue script (until the doorbell is added)', stepDurations.script],
  ['  step: BullMQ doorbell, add → taken by a worker', stepDurations.doorbell],
  ['  step: claim script', stepDurations.claim],
  ['  step: claimed → handler', stepDurations.handler],
];
const idleP99 = percentile(ours, 99);
const bullP99 = percentile(bull, 99);
log(
  `latency: ${samples} samples each; idle p99 / (2 × bullmq p99 + 2 ms) = ${fmt(idleP99 / (2 * bullP99 + 2))}`,
);
process.stdout.write(
  `latency: idle_p50_ms=${fmt(percentile(ours, 50))} idle_p99_ms=${fmt(idleP99)} ` +
    `bullmq_p50_ms=${fmt(percentile(bull, 50))} bullmq_p99_ms=${fmt(bullP99)}\n`,
);
await writeBenchResult(values, {
  name: 'latency',
  title: 'Idle dispatch latency: enqueue to handler start on an idle thread',
  columns: ['path', 'p50 (ms)', 'p99 (ms)'],
  rows: [
    [
      'Tributary: enqueue → turn handler (idle thread)',
      Number(fmt(percentile(ours, 50))),
      Number(fmt(idleP99)),
    ],
    ['plain BullMQ: add → processor (baseline)', Number(fmt(percentile(bull, 50))), Number(fmt(bullP99))],
    ...stepRows.map(([label, values]) => [
      label,
      Number(fmt(percentile(values, 50))),
      Number(fmt(percentile(values, 99))),
    ]),
  ],
  charts: [
    { title: 'p50 (ms)', x: 'path', y: 'p50 (ms)' },
    { title: 'p99 (ms)', x: 'path', y: 'p99 (ms)' },
  ],
  ratios: {
    idle_p50_over_bullmq_p50: Number(fmt(percentile(ours, 50) / percentile(bull, 50))),
    idle_p99_over_bullmq_p99: Number(fmt(idleP99 / bullP99)),
  },
  notes: [
    `${samples} samples per path after ${warmup} warm-up ones, on one local Redis.`,
    'The step rows split the Tributary path of the same samples (p50 and p99 of each step on its own, so they need not add up).',
  ],
});
