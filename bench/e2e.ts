/**
 * End to end (issue: broker cost): signed gateway messages into a real ingress process, two worker
 * processes running the built-in agent, replies posted to a gateway stub in this process. Baseline
 * in the same run: a BullMQ queue and a no-op worker at the same total concurrency, on the same Redis.
 * A second baseline, the HTTP floor: after each round a bare Node process takes the same webhooks at
 * the round's average rate, stores each with one XADD and makes the round's platform calls per message, so the
 * broker's CPU can be read against what the HTTP in and out costs by itself.
 * Each round sends T threads x M messages (message n of every thread before message n+1 of any, so
 * later messages arrive while earlier turns run and are batched) and waits until every message is
 * committed. The threads are the same in every round and, by default, no more than the workers keep
 * live sessions for (each session is an agent process of its own, docs/adr/0015): the figures are a
 * turn's cost on a live session, not an agent's start-up, which the warm-up round pays. It reports turns/s, messages/s and CPU per turn of each process kind: ingress, workers
 * (/proc utime+stime), agents (the workers' descendants, reaped ones included) and Redis (INFO cpu).
 *
 *   npm run bench:e2e [-- --threads 16 --messages 40 --rounds 3 --concurrency 4] [-- --smoke]
 *
 * With PROFILE_DIR set, ingress and each worker write a V8 CPU profile there when they stop (`--cpu-prof`).
 * bench/scale.ts runs the same fleet with N workers and M ingress processes under a steady load.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePort, startRedis, uniquePrefix, waitFor } from '@tributary/testkit';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { formatTable, resultOptions, sizeOption, writeBenchResult } from './bench-result.js';
import { startFleet } from './fleet/fleet.js';
import { startGatewayStub } from './fleet/gateway-stub.js';
import { gatewayEventBody, gatewayWebhook } from './gateway-event.js';
import { closedLoop } from './load.js';
import { processCpuMs } from './process-cpu.js';
import { redisCpuMs } from './redis-cpu.js';
import { median, rounded } from './stats.js';

const { values } = parseArgs({
  options: {
    ...resultOptions,
    threads: { type: 'string' },
    messages: { type: 'string' },
    rounds: { type: 'string' },
    concurrency: { type: 'string' },
  },
});
const threads = sizeOption(values, 'threads', 16, 4);
const perThread = sizeOption(values, 'messages', 40, 5);
const rounds = sizeOption(values, 'rounds', 3, 1);
const concurrency = sizeOption(values, 'concurrency', 4, 2);
const WORKERS = 2;
const log = (line: string) => process.stderr.write(`${line}\n`);
const bare = fileURLToPath(new URL('./bare-webhook-server.ts', import.meta.url));
const CONNECTIONS = 50;

const server = await startRedis({ private: true });
const redis = new Redis(server.url);
const prefix = uniquePrefix('bench-e2e');
const gateway = await startGatewayStub();
const replyUrl = gateway.replyUrl;
// Turns and the messages they carried, from the one info line each dispatch logs.
const dispatches = { turns: 0, messages: 0 };
const fleet = await startFleet({
  redisUrl: server.url,
  prefix,
  replyUrl,
  ingress: 1,
  workers: WORKERS,
  workerEnv: {
    WORKER_CONCURRENCY: String(concurrency),
    AGENT_MAX_SESSIONS: String(Math.max(concurrency, threads)),
  },
  onDispatch: (_, dispatch) => {
    dispatches.turns++;
    dispatches.messages += dispatch.events;
  },
});
const ingressUrl = fleet.ingressUrls[0]!;

function cpuNow() {
  const { ingress, workers, agents } = fleet.cpuMs();
  return { ingress: ingress[0]!, workers: workers.reduce((a, b) => a + b, 0), agents };
}

/** The i-th webhook of a round, as closedLoop sends it. */
function webhook(round: number, i: number) {
  const thread = i % threads;
  const n = Math.floor(i / threads);
  return gatewayWebhook(
    gatewayEventBody({
      id: `${round}-${thread}-${n}`,
      thread: `t-${thread}`,
      text: `message ${n}: is the build green yet?`,
    }),
  );
}

interface Round {
  turnsPerSecond: number;
  messagesPerSecond: number;
  messages: number;
  /** Calls the gateway stub received: 👀 from ingress, progress reactions and replies from workers. */
  platformCalls: number;
  seconds: number;
  turns: number;
  cpuPerTurn: { ingress: number; workers: number; agents: number; redis: number };
}

/** The round's `total` signed webhooks over CONNECTIONS kept-alive connections, as fast as answered or paced. */
function sendWebhooks(
  url: string,
  round: number,
  total: number,
  { retryUnavailable = false, perSecond = Number.POSITIVE_INFINITY } = {},
) {
  const next = (i: number) => (i < total ? webhook(round, i) : undefined);
  return closedLoop(url, CONNECTIONS, Number.POSITIVE_INFINITY, next, retryUnavailable, perSecond);
}

async function tributaryRound(round: number): Promise<Round> {
  const total = threads * perThread;
  const turnsBefore = dispatches.turns;
  const messagesBefore = dispatches.messages;
  const cpuBefore = cpuNow();
  const redisBefore = await redisCpuMs(redis);
  const postsBefore = gateway.posts;
  const started = performance.now();
  const sent = await sendWebhooks(ingressUrl, round, total, { retryUnavailable: true });
  if (sent.retried > 0)
    log(`e2e bench: round ${round}: ${sent.retried} requests answered 503 and were sent again`);
  // Every message dispatched; the turns then finish with their commits.
  await waitFor(() => dispatches.messages - messagesBefore >= total || undefined, {
    what: `${total} messages to be dispatched`,
    timeoutMs: 600_000,
  });
  await waitFor(async () => (await idle()) || undefined, {
    what: 'every thread to go idle',
    timeoutMs: 120_000,
  });
  const seconds = (performance.now() - started) / 1000;
  // A finished turn's last reaction may still be on its way; its CPU and its call belong to the round.
  await gateway.settled();
  const cpu = cpuNow();
  const redisMs = (await redisCpuMs(redis)) - redisBefore;
  const turns = dispatches.turns - turnsBefore;
  return {
    turns,
    messages: total,
    platformCalls: gateway.posts - postsBefore,
    seconds,
    turnsPerSecond: turns / seconds,
    messagesPerSecond: total / seconds,
    cpuPerTurn: {
      ingress: (cpu.ingress - cpuBefore.ingress) / turns,
      workers: (cpu.workers - cpuBefore.workers) / turns,
      agents: (cpu.agents - cpuBefore.agents) / turns,
      redis: redisMs / turns,
    },
  };
}

/** No thread running or waiting in any bucket: every turn has committed. */
async function idle(): Promise<boolean> {
  const indexes = await redis.keys(`${prefix}:{b*}:run`);
  const waiting = await redis.keys(`${prefix}:{b*}:sched`);
  for (const key of [...indexes, ...waiting]) if ((await redis.zcard(key)) > 0) return false;
  return true;
}

interface Floor {
  messagesPerSecond: number;
  callsPerMessage: number;
  /** Over the Tributary round's turns, so it reads against broker (sum). */
  cpuPerTurn: number;
  redisPerTurn: number;
}

/**
 * The HTTP floor of a Tributary round: a bare process (bench/bare-webhook-server.ts) takes the round's
 * webhooks over as many connections at the round's messages/s, XADDs each and makes the round's
 * platform calls per message to the same gateway stub. Spawned per round because k changes with it.
 */
async function floorRound(round: number, ours: Round): Promise<Floor> {
  const total = ours.messages;
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const args = ['--script', '--redis', server.url, '--call-url', replyUrl];
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', bare, ...args, '--calls-per-request', String(ours.platformCalls / total)],
    { env: { PATH: process.env.PATH, PORT: String(port) }, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  try {
    await waitFor(async () => (await fetch(`${url}/livez`).catch(() => undefined))?.ok || undefined, {
      what: 'the HTTP floor server to listen',
      timeoutMs: 30_000,
    });
    const pass = async (perSecond: number) => {
      const postsBefore = gateway.posts;
      const sent = await sendWebhooks(url, round, total, { perSecond });
      await waitFor(() => gateway.posts - postsBefore >= ours.platformCalls || undefined, {
        what: `the HTTP floor's ${ours.platformCalls} platform calls`,
        timeoutMs: 60_000,
      });
      return { perSecond: sent.perSecond, calls: gateway.posts - postsBefore };
    };
    // A fresh process: one unpaced pass first, so the measured one runs warm code, as Tributary's
    // processes do after the warm-up round.
    await pass(Number.POSITIVE_INFINITY);
    const cpuBefore = processCpuMs(child.pid!);
    const redisBefore = await redisCpuMs(redis);
    const measured = await pass(total / ours.seconds);
    const cpuMs = processCpuMs(child.pid!) - cpuBefore;
    const redisMs = (await redisCpuMs(redis)) - redisBefore;
    return {
      messagesPerSecond: measured.perSecond,
      callsPerMessage: measured.calls / total,
      cpuPerTurn: (cpuMs + redisMs) / ours.turns,
      redisPerTurn: redisMs / ours.turns,
    };
  } finally {
    child.kill('SIGKILL');
  }
}

async function bullmqRound(): Promise<{ jobsPerSecond: number; redisPerJob: number }> {
  const bullPrefix = uniquePrefix('bench-bull');
  const queue = new Queue('noop', { connection: redis, prefix: bullPrefix });
  const total = threads * perThread;
  const redisBefore = await redisCpuMs(redis);
  const started = performance.now();
  let done = 0;
  const connection = redis.duplicate({ maxRetriesPerRequest: null });
  const worker = new Worker(
    'noop',
    async () => {
      done++;
    },
    { connection, prefix: bullPrefix, concurrency: WORKERS * concurrency },
  );
  for (let from = 0; from < total; from += 500) {
    await queue.addBulk(
      Array.from({ length: Math.min(500, total - from) }, (_, i) => ({
        name: 'job',
        data: { n: from + i },
        opts: { removeOnComplete: true },
      })),
    );
  }
  await waitFor(() => done >= total || undefined, { what: 'the BullMQ jobs', timeoutMs: 300_000 });
  const seconds = (performance.now() - started) / 1000;
  const redisMs = (await redisCpuMs(redis)) - redisBefore;
  await worker.close();
  connection.disconnect();
  await queue.obliterate({ force: true });
  await queue.close();
  return { jobsPerSecond: total / seconds, redisPerJob: redisMs / total };
}

const ours: Round[] = [];
const bull: { jobsPerSecond: number; redisPerJob: number }[] = [];
const floors: Floor[] = [];
try {
  log('e2e bench: warming up');
  const warm = threads;
  await tributaryRound(0).catch((error: unknown) => {
    throw new Error(`warm-up failed (${warm} threads): ${String(error)}`);
  });
  for (let r = 1; r <= rounds; r++) {
    const round = await tributaryRound(r);
    ours.push(round);
    const baseline = await bullmqRound();
    bull.push(baseline);
    const floor = await floorRound(r, round);
    floors.push(floor);
    log(
      `e2e bench: round ${r}: ${round.turnsPerSecond.toFixed(0)} turns/s, ` +
        `${round.messagesPerSecond.toFixed(0)} msgs/s, ${(round.platformCalls / round.messages).toFixed(2)} ` +
        `platform calls per message; BullMQ ${baseline.jobsPerSecond.toFixed(0)} jobs/s; HTTP floor ` +
        `${floor.messagesPerSecond.toFixed(0)} msgs/s, ${floor.cpuPerTurn.toFixed(2)} ms CPU per turn`,
    );
  }
} finally {
  await fleet.stop();
  gateway.close();
  redis.disconnect();
  await server.stop();
}

const m = (pick: (r: Round) => number) => median(ours.map(pick));
const turnsPerSecond = m((r) => r.turnsPerSecond);
const bullJobs = median(bull.map((b) => b.jobsPerSecond));
const cpu = {
  ingress: m((r) => r.cpuPerTurn.ingress),
  workers: m((r) => r.cpuPerTurn.workers),
  redis: m((r) => r.cpuPerTurn.redis),
  agents: m((r) => r.cpuPerTurn.agents),
};
const broker = cpu.ingress + cpu.workers + cpu.redis;
const f = (pick: (floor: Floor) => number) => median(floors.map(pick));
const floorCpu = f((floor) => floor.cpuPerTurn);
const floorRedis = f((floor) => floor.redisPerTurn);
// One row per figure; each baseline column holds that baseline where it has one, else an empty cell.
const columns = ['measure', 'unit', 'tributary', 'BullMQ no-op (baseline)', 'HTTP floor (baseline)'];
const rows: [string, string, number, number | string, number | string][] = [
  ['turns (jobs)', 'per second', rounded(turnsPerSecond), rounded(bullJobs), ''],
  [
    'messages',
    'per second',
    rounded(m((r) => r.messagesPerSecond)),
    '',
    rounded(f((floor) => floor.messagesPerSecond)),
  ],
  ['messages per turn', 'messages', rounded(m((r) => r.messages / r.turns)), 1, ''],
  [
    'platform calls',
    'per message',
    rounded(m((r) => r.platformCalls / r.messages)),
    '',
    rounded(f((floor) => floor.callsPerMessage)),
  ],
  ['ingress', 'CPU ms per turn', rounded(cpu.ingress), '', ''],
  ['workers', 'CPU ms per turn', rounded(cpu.workers), '', ''],
  [
    'Redis',
    'CPU ms per turn',
    rounded(cpu.redis),
    rounded(median(bull.map((b) => b.redisPerJob)), 3),
    rounded(floorRedis, 3),
  ],
  ['broker (sum)', 'CPU ms per turn', rounded(broker), '', rounded(floorCpu)],
  ['agents', 'CPU ms per turn', rounded(cpu.agents), '', ''],
];
process.stdout.write(`\n${formatTable(columns, rows)}\n`);
await writeBenchResult(values, {
  name: 'e2e',
  title: 'End-to-end throughput and CPU per turn',
  columns,
  rows,
  ratios: {
    turns_per_second_over_bullmq_jobs: rounded(turnsPerSecond / bullJobs, 3),
    // A smoke run's few turns can leave the agents below one clock tick of CPU: no ratio then.
    ...(cpu.agents > 0 ? { broker_cpu_over_agent_cpu: rounded(broker / cpu.agents) } : {}),
    ...(floorCpu > 0 ? { broker_cpu_over_http_floor: rounded(broker / floorCpu) } : {}),
  },
  charts: [{ title: 'Tributary end to end', x: 'measure', y: 'tributary', facet: 'unit' }],
  notes: [
    `${threads} threads × ${perThread} messages per round into a real ingress, ${WORKERS} workers × ${concurrency} concurrent turns with the built-in agent, replies posted to a gateway stub; median of ${rounds} rounds after a warm-up round, each followed by the two baseline rounds.`,
    'Baseline: BullMQ jobs through a no-op processor at the same total concurrency on the same Redis; it does no agent work, so the ratio is an upper bound on queueing cost, not a like-for-like race.',
    `HTTP floor: after each round, a bare Node process (bench/bare-webhook-server.ts) takes the same signed webhooks over ${CONNECTIONS} connections, spread evenly over the round's duration (its average message rate; Tributary's ingress took them as a burst); raw body, 200 JSON, signature not checked; one XADD script per request on the same Redis; and, without waiting for them, the round's platform calls per message to the same gateway stub (undici, kept-alive, with a timeout, unsigned bodies the size of a reaction); its CPU (/proc) plus Redis's, over the round's turns. About that much any broker on this path spends, so broker (sum) above it is roughly what Tributary adds.`,
    'CPU per turn: ingress and workers from /proc utime+stime, agents are the workers’ descendants (reaped ones included), Redis from INFO cpu. broker (sum) = ingress + workers + Redis.',
  ],
});
