/**
 * Scale-out: does adding workers add turns? The end-to-end fleet of bench/e2e.ts (real ingress and
 * worker processes, the built-in agent, replies to a gateway stub) with N workers and M ingress
 * processes, on one Redis or a 3-primary Redis Cluster, under a closed-loop saturating load or an
 * open-loop chat-like one (bench/scale/loads.ts). Each worker count in `--workers` gets a fresh fleet,
 * a warm-up until every thread has had a turn, and a measured window: turns/s and messages/s, CPU per
 * turn of ingress, workers, Redis and the agents, acknowledgement p50/p99, agent processes started,
 * turns whose thread moved to another worker or whose session had to be opened again, and the most
 * agent processes alive at once (the workers' descendants, sampled every 200 ms). The baseline is the
 * same run's 1-worker configuration: efficiency at N workers = turns/s at N / (N × turns/s at 1).
 *
 *   npm run bench:scale [-- --workers 1,2,4,8 --ingress 1 --cluster --threads 24 --concurrency 4
 *                          --seconds 15 --warmup-seconds 10 --load closed|open --rate 24 --rounds 1] [-- --smoke]
 *
 * `npm run bench:scale:bundle` packs this benchmark with node, redis-server and redis-cli for a machine
 * that has none of them (bench/scale/bundle.ts).
 */
import { parseArgs } from 'node:util';
import { startRedis, startRedisCluster } from '@tributary/testkit';
import { Redis } from 'ioredis';
import { type Cell, formatTable, resultOptions, sizeOption, writeBenchResult } from './bench-result.js';
import { type GatewayPost, startGatewayStub } from './fleet/gateway-stub.js';
import { type ConfigurationResult, combineRounds, runConfiguration } from './scale/configuration.js';
import { rounded } from './stats.js';

const { values } = parseArgs({
  options: {
    ...resultOptions,
    workers: { type: 'string' },
    ingress: { type: 'string' },
    cluster: { type: 'boolean', default: false },
    threads: { type: 'string' },
    concurrency: { type: 'string' },
    seconds: { type: 'string' },
    'warmup-seconds': { type: 'string' },
    'warmup-threads': { type: 'string' },
    load: { type: 'string' },
    rate: { type: 'string' },
    'max-sessions': { type: 'string' },
    rounds: { type: 'string' },
  },
});
const workerCounts = (values.workers ?? '1,2').split(',').map((n) => Number(n.trim()));
if (!workerCounts.every((n) => Number.isInteger(n) && n > 0)) {
  throw new RangeError(`--workers must list positive whole numbers, got ${values.workers}`);
}
const load = values.load ?? 'closed';
if (load !== 'closed' && load !== 'open') throw new RangeError(`--load must be closed or open, got ${load}`);
const ingress = sizeOption(values, 'ingress', 1);
const threads = sizeOption(values, 'threads', 24, 4);
const concurrency = sizeOption(values, 'concurrency', 4, 2);
const seconds = sizeOption(values, 'seconds', 15, 3);
const warmupSeconds = sizeOption(values, 'warmup-seconds', 10, 1);
// How many threads must have had a turn before the window opens: all of them by default; fewer for an
// overload run, where more threads than the workers can keep sessions for keep arriving.
const warmupThreads = Math.min(threads, sizeOption(values, 'warmup-threads', threads));
const rate = sizeOption(values, 'rate', threads);
// As bench/e2e.ts: enough live sessions on one worker for every thread, so a configuration measures
// the fleet's placement of threads and not a cap that is too small for the load.
const maxSessions = sizeOption(values, 'max-sessions', Math.max(threads, concurrency));
const rounds = sizeOption(values, 'rounds', 1);
const log = (line: string) => process.stderr.write(`${line}\n`);

const cluster = values.cluster ? await startRedisCluster() : undefined;
const server = cluster ?? (await startRedis({ private: true }));
const nodeUrls = cluster ? cluster.nodes.map((node) => node.url) : [server.url];
const redisServers = nodeUrls.map((url) => new Redis(url));
let listener: ((post: GatewayPost) => void) | undefined;
const gateway = await startGatewayStub((post) => listener?.(post));
const redisLabel = values.cluster ? '3-primary cluster' : 'single';

const measured = new Map<number, ConfigurationResult[]>(workerCounts.map((workers) => [workers, []]));
try {
  // Rounds alternate the order of the worker counts, so a machine busier at one end of the run does
  // not favour one configuration.
  const order = Array.from({ length: rounds }, (_, r) =>
    r % 2 === 0 ? workerCounts : [...workerCounts].reverse(),
  );
  for (const workers of order.flat()) {
    log(`scale bench: ${workers} worker(s), ${ingress} ingress, ${redisLabel} Redis, ${load} load`);
    const result = await runConfiguration({
      workers,
      ingress,
      threads,
      concurrency,
      maxSessions,
      warmupSeconds,
      warmupThreads,
      seconds,
      load,
      rate,
      redisUrl: server.url,
      redisServers,
      replyUrl: gateway.replyUrl,
      listen: (onPost) => {
        listener = onPost;
      },
    });
    if (result.turns === 0) throw new Error(`no turn completed in the window with ${workers} worker(s)`);
    measured.get(workers)!.push(result);
    log(
      `scale bench: ${workers} worker(s): ${(result.turns / result.seconds).toFixed(1)} turns/s, ` +
        `${result.agentStarts} agent starts, ${result.moves} moves, peak ${result.peakAgents} agent processes` +
        (result.retried > 0 ? `, ${result.retried} requests answered 503 and sent again` : ''),
    );
  }
} finally {
  gateway.close();
  for (const redis of redisServers) redis.disconnect();
  await server.stop();
}

const results = new Map([...measured].map(([workers, runs]) => [workers, combineRounds(runs)]));
const turnsPerSecond = (r: ConfigurationResult) => r.turns / r.seconds;
const single = results.get(1);
const efficiency = (workers: number, r: ConfigurationResult) =>
  single ? rounded(turnsPerSecond(r) / (workers * turnsPerSecond(single)), 3) : '';
const columns = [
  'workers',
  'turns/s',
  'msgs/s',
  'efficiency',
  'ingress CPU ms/turn',
  'workers CPU ms/turn',
  'Redis CPU ms/turn',
  'broker CPU ms/turn',
  'agent CPU ms/turn',
  'ack p50 ms',
  'ack p99 ms',
  'agent starts/turn',
  'session moves/turn',
  'sessions opened/turn',
  'takeovers',
  'peak agent processes',
  'agent processes/thread',
  'busiest ingress cores',
  'busiest Redis node cores',
];
const rows: Cell[][] = [...results].map(([workers, r]) => {
  const perTurn = (value: number, digits = 2) => rounded(value / r.turns, digits);
  const cores = (ms: number) => rounded(ms / (r.seconds * 1000));
  const { cpuMs } = r;
  return [
    workers,
    rounded(turnsPerSecond(r), 1),
    rounded(r.messages / r.seconds, 1),
    efficiency(workers, r),
    perTurn(cpuMs.ingress),
    perTurn(cpuMs.workers),
    perTurn(cpuMs.redis),
    perTurn(cpuMs.ingress + cpuMs.workers + cpuMs.redis),
    perTurn(cpuMs.agents),
    rounded(r.ackP50),
    rounded(r.ackP99),
    perTurn(r.agentStarts, 3),
    perTurn(r.moves, 3),
    perTurn(r.opened, 3),
    r.takeovers,
    r.peakAgents,
    rounded(r.peakAgents / threads),
    cores(cpuMs.busiestIngress),
    cores(cpuMs.busiestRedis),
  ];
});
process.stdout.write(`\n${formatTable(columns, rows)}\n`);

const worst = (pick: (r: ConfigurationResult) => number) => Math.max(...[...results.values()].map(pick));
const efficiencies = Object.fromEntries(
  [...results].flatMap(([workers, r]) =>
    workers === 1 || !single ? [] : [[`efficiency_${workers}_workers`, efficiency(workers, r) as number]],
  ),
);
const written = await writeBenchResult(values, {
  name: 'scale',
  title: 'Scale-out: turns per second and agent processes by number of workers',
  columns,
  rows,
  ratios: {
    ...efficiencies,
    agent_starts_per_turn: rounded(
      worst((r) => r.agentStarts / r.turns),
      3,
    ),
    agent_processes_per_thread: rounded(worst((r) => r.peakAgents / threads)),
    takeovers: Math.max(...[...results.values()].map((r) => r.takeovers)),
    session_moves_per_turn: rounded(
      worst((r) => r.moves / r.turns),
      3,
    ),
  },
  charts: [
    { title: 'Turns per second by workers', x: 'workers', y: 'turns/s' },
    { title: 'Peak agent processes per thread by workers', x: 'workers', y: 'agent processes/thread' },
  ],
  notes: [
    `${rounds} round(s), the order of the worker counts alternating; a row pools its rounds (ack percentiles: the median round's, peak agent processes: the highest). ${ingress} ingress process(es), ${redisLabel} Redis, ${threads} threads, ${concurrency} concurrent turns and up to ${maxSessions} live sessions per worker (WORKER_CONCURRENCY, AGENT_MAX_SESSIONS), the built-in agent with one state folder for the fleet; a fresh fleet per row, warmed up until ${warmupThreads === threads ? 'every thread' : `${warmupThreads} threads`} had a turn and at least ${warmupSeconds} s had passed, then measured for ${seconds} s.`,
    load === 'closed'
      ? 'Closed loop: each thread sends one message, waits for the reply and sends the next at once, so the fleet is saturated whenever threads outnumber its turn slots and msgs/s equals turns/s.'
      : `Open loop, chat-like: bursts of 1-4 messages 200-800 ms apart, starting at random times on random threads, ${rate} messages/s on average whatever the replies; messages that arrive during a turn go in the next one together.`,
    'efficiency = turns/s / (workers × turns/s with 1 worker) of the same run. broker CPU = ingress + workers + Redis (every node); agents are the workers’ descendants, reaped ones included (/proc). ack: webhook sent to 200 answered.',
    'agent starts: the workers’ "agent process started" log lines. session moves: turns that ran on another worker than the thread’s previous turn; sessions opened: turns whose session was not live on their worker (resumed, loaded or new), from the dispatch log lines. takeovers: threads a sweeper took from a worker whose presence it found gone, from the workers’ log lines; every worker is alive throughout, so each one is a false takeover. peak agent processes: the most live descendants of all workers at once (their agent wardens aside), sampled every 200 ms.',
    'Ratios agent_starts_per_turn, agent_processes_per_thread and session_moves_per_turn are the largest over the rows. The load generator runs on the same machine and takes CPU of its own.',
  ],
});
log(`scale bench: results in ${written}`);
