/**
 * One configuration of bench/scale.ts: a fresh fleet (N workers, M ingress) on the run's Redis, a
 * load until every thread has had a turn and the warm-up has passed, then a measured window: turns,
 * messages, CPU of every process kind, acknowledgement latency, agent processes started, sessions
 * that moved or were opened again, and the most agent processes alive at once.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { uniquePrefix, waitFor } from '@tributary/testkit';
import type { Redis } from 'ioredis';
import { type Fleet, startFleet } from '../fleet/fleet.js';
import type { GatewayPost } from '../fleet/gateway-stub.js';
import { redisCpuMs } from '../redis-cpu.js';
import { median, percentile } from '../stats.js';
import { closedLoad, openLoad, type RunningLoad } from './loads.js';

export interface ConfigurationOptions {
  workers: number;
  ingress: number;
  threads: number;
  concurrency: number;
  maxSessions: number;
  warmupSeconds: number;
  /** Threads that must have had a turn before the window opens. */
  warmupThreads: number;
  seconds: number;
  load: 'closed' | 'open';
  /** Messages per second of the open load. */
  rate: number;
  redisUrl: string;
  /** A connection to each Redis server (each Cluster node), for its CPU. */
  redisServers: Redis[];
  replyUrl: string;
  /** The gateway stub's posts go here while the configuration runs. */
  listen(onPost: ((post: GatewayPost) => void) | undefined): void;
}

export interface ConfigurationResult {
  seconds: number;
  turns: number;
  messages: number;
  cpuMs: {
    ingress: number;
    busiestIngress: number;
    workers: number;
    agents: number;
    redis: number;
    busiestRedis: number;
  };
  ackP50: number;
  ackP99: number;
  agentStarts: number;
  /** Turns that ran on another worker than the thread's previous turn. */
  moves: number;
  /** Turns whose session was not live on their worker (resumed, loaded or new). */
  opened: number;
  /** Threads a sweeper took from a worker it found gone: with every worker alive, each one is false. */
  takeovers: number;
  peakAgents: number;
  retried: number;
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/**
 * One configuration's rounds as one: counts, CPU and time added up (so rates and per-turn figures are
 * over all of them), the median round's acknowledgement percentiles, the highest peak of agents.
 */
export function combineRounds(runs: ConfigurationResult[]): ConfigurationResult {
  const total = (pick: (r: ConfigurationResult) => number) => sum(runs.map(pick));
  return {
    seconds: total((r) => r.seconds),
    turns: total((r) => r.turns),
    messages: total((r) => r.messages),
    cpuMs: {
      ingress: total((r) => r.cpuMs.ingress),
      busiestIngress: total((r) => r.cpuMs.busiestIngress),
      workers: total((r) => r.cpuMs.workers),
      agents: total((r) => r.cpuMs.agents),
      redis: total((r) => r.cpuMs.redis),
      busiestRedis: total((r) => r.cpuMs.busiestRedis),
    },
    ackP50: median(runs.map((r) => r.ackP50)),
    ackP99: median(runs.map((r) => r.ackP99)),
    agentStarts: total((r) => r.agentStarts),
    moves: total((r) => r.moves),
    opened: total((r) => r.opened),
    takeovers: total((r) => r.takeovers),
    peakAgents: Math.max(...runs.map((r) => r.peakAgents)),
    retried: total((r) => r.retried),
  };
}

/** Everything the fleet's log lines tell, counted from the start. */
class Tally {
  turns = 0;
  messages = 0;
  agentStarts = 0;
  moves = 0;
  opened = 0;
  takeovers = 0;
  readonly #lastWorker = new Map<string, number>();

  dispatched(worker: number, dispatch: { thread: string; events: number; sessionPath: string }): void {
    this.turns++;
    this.messages += dispatch.events;
    if (dispatch.sessionPath !== 'live') this.opened++;
    const last = this.#lastWorker.get(dispatch.thread);
    if (last !== undefined && last !== worker) this.moves++;
    this.#lastWorker.set(dispatch.thread, worker);
  }

  get threadsServed(): number {
    return this.#lastWorker.size;
  }

  snapshot() {
    const { turns, messages, agentStarts, moves, opened, takeovers } = this;
    return { turns, messages, agentStarts, moves, opened, takeovers };
  }
}

async function cpuNow(fleet: Fleet, redisServers: Redis[]) {
  return { fleet: fleet.cpuMs(), redis: await Promise.all(redisServers.map(redisCpuMs)) };
}

export async function runConfiguration(options: ConfigurationOptions): Promise<ConfigurationResult> {
  const tally = new Tally();
  const stateDir = await mkdtemp(join(tmpdir(), 'tributary-scale-agents-'));
  const fleet = await startFleet({
    redisUrl: options.redisUrl,
    prefix: uniquePrefix(`bench-scale-${options.workers}w`),
    replyUrl: options.replyUrl,
    ingress: options.ingress,
    workers: options.workers,
    workerEnv: {
      WORKER_CONCURRENCY: String(options.concurrency),
      AGENT_MAX_SESSIONS: String(options.maxSessions),
    },
    // One state folder for the fleet's agents, as workers sharing a volume have: a session that moves
    // can be resumed on another worker.
    agentEnv: { TRIBUTARY_AGENT_STATE_DIR: stateDir },
    onDispatch: (worker, dispatch) => tally.dispatched(worker, dispatch),
    onAgentStarted: () => tally.agentStarts++,
    onTakeover: (threads) => {
      tally.takeovers += threads;
    },
  });
  let load: RunningLoad | undefined;
  try {
    const target = {
      ingressUrls: fleet.ingressUrls,
      threads: options.threads,
      run: uniquePrefix('scale'),
      connections: Math.min(50, options.threads),
    };
    load = options.load === 'closed' ? closedLoad(target) : openLoad(target, options.rate);
    const running = load;
    options.listen((post) => {
      if (post.command === undefined && post.reply_to !== undefined) running.replied(post.reply_to);
    });
    const warmUntil = performance.now() + options.warmupSeconds * 1000;
    await waitFor(
      () => (tally.threadsServed >= options.warmupThreads && performance.now() >= warmUntil) || undefined,
      {
        what: `${options.warmupThreads} of ${options.threads} threads to have had a turn`,
        timeoutMs: options.warmupSeconds * 1000 + 180_000,
        intervalMs: 50,
      },
    );

    // Every thread has had a turn, so some agent process has started: none counted means the workers'
    // log line changed, and every start would go uncounted.
    if (tally.agentStarts === 0) throw new Error('no "agent process started" line from any worker');
    const before = { tally: tally.snapshot(), cpu: await cpuNow(fleet, options.redisServers) };
    load.takeLatencies();
    const started = performance.now();
    let peakAgents = fleet.liveAgents();
    while (performance.now() - started < options.seconds * 1000) {
      await sleep(Math.min(200, options.seconds * 1000 - (performance.now() - started)));
      peakAgents = Math.max(peakAgents, fleet.liveAgents());
    }
    const after = { tally: tally.snapshot(), cpu: await cpuNow(fleet, options.redisServers) };
    const seconds = (performance.now() - started) / 1000;
    const latencies = load.takeLatencies();
    const delta = (pick: (t: ReturnType<Tally['snapshot']>) => number) =>
      pick(after.tally) - pick(before.tally);
    const each = (pick: (c: typeof before.cpu) => number[]) =>
      pick(after.cpu).map((value, i) => value - pick(before.cpu)[i]!);
    const ingress = each((c) => c.fleet.ingress);
    const redis = each((c) => c.redis);
    return {
      seconds,
      turns: delta((t) => t.turns),
      messages: delta((t) => t.messages),
      cpuMs: {
        ingress: sum(ingress),
        busiestIngress: Math.max(...ingress),
        workers: sum(each((c) => c.fleet.workers)),
        agents: after.cpu.fleet.agents - before.cpu.fleet.agents,
        redis: sum(redis),
        busiestRedis: Math.max(...redis),
      },
      ackP50: latencies.length > 0 ? percentile(latencies, 50) : 0,
      ackP99: latencies.length > 0 ? percentile(latencies, 99) : 0,
      agentStarts: delta((t) => t.agentStarts),
      moves: delta((t) => t.moves),
      opened: delta((t) => t.opened),
      takeovers: delta((t) => t.takeovers),
      peakAgents,
      retried: load.retried,
    };
  } finally {
    options.listen(undefined);
    try {
      // The load first, while ingress still answers what it has in flight.
      await load?.stop();
    } finally {
      await fleet.stop();
      await rm(stateDir, { recursive: true, force: true });
    }
  }
}
