/**
 * Ingress throughput (issue: broker cost): signed gateway webhooks against a real ingress process,
 * and against two baselines in the same run: a bare Fastify server answering the same request, and
 * the same server plus one XADD script per request (the least a durable queue must do). Each target
 * is its own process on one private Redis (AOF everysec); rounds are interleaved and the median round
 * is reported, with p99 latency, server CPU per request (process.cpuUsage over IPC) and Redis CPU per
 * request (INFO cpu). Messages go to a rotating set of threads, so a share of them ring a doorbell.
 *
 *   npm run bench:ingress [-- --rounds 3 --seconds 5 --connections 50 --threads 2000] [-- --smoke]
 *
 * With PROFILE_DIR set, the ingress process writes a V8 CPU profile there when it stops (`--cpu-prof`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePort, startRedis, uniquePrefix, waitFor } from '@tributary/testkit';
import { Redis } from 'ioredis';
import { formatTable, resultOptions, sizeOption, writeBenchResult } from './bench-result.js';
import { BENCH_GATEWAY_SECRET, gatewayEventBody, gatewayWebhook } from './gateway-event.js';
import { closedLoop, type LoadResult } from './load.js';
import { redisCpuMs } from './redis-cpu.js';
import { median, rounded } from './stats.js';

const { values } = parseArgs({
  options: {
    ...resultOptions,
    rounds: { type: 'string' },
    seconds: { type: 'string' },
    connections: { type: 'string' },
    threads: { type: 'string' },
  },
});
const rounds = sizeOption(values, 'rounds', 3, 1);
const seconds = sizeOption(values, 'seconds', 5, 1);
const connections = sizeOption(values, 'connections', 50, 10);
const threads = sizeOption(values, 'threads', 2000, 100);
const log = (line: string) => process.stderr.write(`${line}\n`);

const cli = fileURLToPath(new URL('../apps/cli/bin/tributary.js', import.meta.url));
const bare = fileURLToPath(new URL('./bare-webhook-server.ts', import.meta.url));
const probe = fileURLToPath(new URL('./intake-cpu-probe.ts', import.meta.url));

interface Target {
  name: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  child?: ChildProcess;
  url?: string;
}

const redisServer = await startRedis({ private: true, appendfsync: 'everysec' });
const redis = new Redis(redisServer.url);

async function start(target: Target): Promise<void> {
  const port = await freePort();
  target.url = `http://127.0.0.1:${port}`;
  const profile =
    target.args[1] === 'ingress' && process.env.PROFILE_DIR
      ? ['--cpu-prof', `--cpu-prof-dir=${process.env.PROFILE_DIR}`]
      : [];
  const child = spawn(process.execPath, [...profile, '--import', 'tsx', '--import', probe, ...target.args], {
    env: { PATH: process.env.PATH, ...target.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => {
    stderr += chunk;
  });
  target.child = child;
  await waitFor(async () => (await fetch(`${target.url}/livez`).catch(() => undefined))?.ok || undefined, {
    what: `${target.name} to listen (${stderr})`,
    timeoutMs: 30_000,
  });
}

async function cpuOf(child: ChildProcess): Promise<number> {
  const reply = once(child, 'message');
  child.send('probe');
  const [{ cpu }] = (await reply) as [{ cpu: NodeJS.CpuUsage }];
  return (cpu.user + cpu.system) / 1000;
}

interface Round extends LoadResult {
  cpuUs: number;
  redisUs: number;
}

let sequence = 0;
async function round(target: Target, roundNo: number): Promise<Round> {
  const cpuBefore = await cpuOf(target.child!);
  const redisBefore = await redisCpuMs(redis);
  const result = await closedLoop(target.url!, connections, seconds, (i) =>
    gatewayWebhook(
      gatewayEventBody({
        id: `${roundNo}-${sequence++}`,
        thread: `t-${roundNo}-${i % threads}`,
        text: 'is the build green yet? run the e2e suite when it is',
      }),
    ),
  );
  const cpuUs = ((await cpuOf(target.child!)) - cpuBefore) * 1000;
  const redisUs = ((await redisCpuMs(redis)) - redisBefore) * 1000;
  return { ...result, cpuUs: cpuUs / result.requests, redisUs: redisUs / result.requests };
}

const targets: Target[] = [
  {
    name: 'tributary ingress',
    args: [cli, 'ingress'],
    env: {
      REDIS_URL: redisServer.url,
      REDIS_PREFIX: uniquePrefix('bench-ingress'),
      HOST: '127.0.0.1',
      GATEWAY_SECRET: BENCH_GATEWAY_SECRET,
      RATE_LIMIT_PER_MINUTE: '100000000',
      MAX_THREAD_BACKLOG: '100000',
      LOG_LEVEL: 'warn',
    },
  },
  { name: 'bare fastify', args: [bare], env: {} },
  { name: 'bare fastify + XADD script', args: [bare, '--script', '--redis', redisServer.url], env: {} },
];

const results = new Map<string, Round[]>(targets.map((t) => [t.name, []]));
try {
  for (const target of targets) await start(target);
  log('ingress bench: warming up');
  for (const target of targets) await round(target, 0);
  for (let r = 1; r <= rounds; r++) {
    for (const target of targets) {
      const result = await round(target, r);
      results.get(target.name)!.push(result);
      log(
        `ingress bench: round ${r} ${target.name}: ${result.perSecond.toFixed(0)} req/s, ` +
          `p99 ${result.p99.toFixed(1)} ms, ${result.cpuUs.toFixed(0)} µs CPU, ${result.redisUs.toFixed(0)} µs Redis`,
      );
    }
  }
} finally {
  // A profiled ingress writes its profile when it exits, so it is stopped, not killed.
  if (process.env.PROFILE_DIR) {
    const ingress = targets[0]!.child!;
    const exited = once(ingress, 'exit');
    ingress.kill('SIGTERM');
    await exited;
  }
  for (const target of targets) target.child?.kill('SIGKILL');
  redis.disconnect();
  await redisServer.stop();
}

const summary = targets.map((t) => {
  const runs = results.get(t.name)!;
  return {
    name: t.name,
    perSecond: median(runs.map((r) => r.perSecond)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    cpuUs: median(runs.map((r) => r.cpuUs)),
    redisUs: median(runs.map((r) => r.redisUs)),
  };
});
const [tributary, bareFastify, withScript] = summary as [
  (typeof summary)[0],
  (typeof summary)[0],
  (typeof summary)[0],
];
const columns = ['target', 'req/s', 'p50 (ms)', 'p99 (ms)', 'CPU µs/req', 'Redis µs/req'];
const rows = summary.map((s) => [
  s.name,
  Math.round(s.perSecond),
  rounded(s.p50),
  rounded(s.p99),
  Math.round(s.cpuUs),
  Math.round(s.redisUs),
]);
process.stdout.write(`\n${formatTable(columns, rows)}\n`);
await writeBenchResult(values, {
  name: 'ingress',
  title: 'Ingress accept rate: signed webhooks against bare Fastify',
  columns,
  rows,
  ratios: {
    rps_over_bare_fastify: rounded(tributary.perSecond / bareFastify.perSecond),
    rps_over_bare_xadd: rounded(tributary.perSecond / withScript.perSecond),
    p99_over_bare_fastify_p99: rounded(tributary.p99 / bareFastify.p99),
    cpu_per_request_over_bare_fastify: rounded(tributary.cpuUs / bareFastify.cpuUs),
  },
  charts: [
    { title: 'Accepted per second', x: 'target', y: 'req/s' },
    { title: 'p99 latency (ms)', x: 'target', y: 'p99 (ms)' },
    { title: 'Server CPU per request (µs)', x: 'target', y: 'CPU µs/req' },
  ],
  notes: [
    `Signed gateway webhooks, ${connections} connections in a closed loop, ${seconds} s per round, median of ${rounds} interleaved rounds after a warm-up round.`,
    `Messages rotate over ${threads} threads per round, so some ring a doorbell and the rest join a waiting thread.`,
    'Each target is its own process on one private Redis with AOF everysec; CPU µs/req is the server process (process.cpuUsage), Redis µs/req is INFO cpu.',
    'bare fastify answers the same signed request without checking or storing it; + XADD script adds one Lua XADD per request, the least a durable queue does.',
  ],
});
