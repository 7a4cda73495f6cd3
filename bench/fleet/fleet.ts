/**
 * A benchmark's Tributary fleet: M real `tributary ingress` and N real `tributary worker` processes
 * (the built-in agent) on one Redis or Redis Cluster, replies posted to a gateway stub. What the
 * workers do is read from their own JSON log lines: each dispatch (thread, events, how its session was
 * found) and each agent process started. With PROFILE_DIR set, every process writes a V8 CPU profile
 * there when it stops (`--cpu-prof`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { freePort, waitFor } from '@tributary/testkit';
import { BENCH_GATEWAY_SECRET } from '../gateway-event.js';
import { onLogLines } from '../log-lines.js';

/** Whether the process is a worker's agent warden (its command line names its entry module). */
function isWarden(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('warden-main');
  } catch {
    return false;
  }
}

import { descendants, descendantsCpuMs, processCpuMs } from '../process-cpu.js';

const cli = fileURLToPath(new URL('../../apps/cli/bin/tributary.js', import.meta.url));

/** What a worker's `dispatch` log line says about one turn. */
export interface Dispatch {
  thread: string;
  /** Messages in the batch. */
  events: number;
  /** How the worker found the thread's session: live, resumed, loaded or new. */
  sessionPath: string;
}

export interface FleetOptions {
  redisUrl: string;
  prefix: string;
  replyUrl: string;
  ingress: number;
  workers: number;
  /** Variables of every worker on top of the fleet's own (concurrency, sessions). */
  workerEnv: Record<string, string>;
  /** Variables the workers pass on to their agents (through AGENT_ENV). */
  agentEnv?: Record<string, string>;
  onDispatch?: (worker: number, dispatch: Dispatch) => void;
  onAgentStarted?: (worker: number) => void;
  /** A sweeper took threads from a worker whose presence was gone. */
  onTakeover?: (threads: number) => void;
}

export interface Fleet {
  /** One origin per ingress process. */
  ingressUrls: string[];
  /** CPU ms so far of each ingress and each worker process, and of every agent the workers started. */
  cpuMs(): { ingress: number[]; workers: number[]; agents: number };
  /** Agent processes alive now: every descendant of every worker. */
  liveAgents(): number;
  /** SIGTERM to every process (a worker kills its agents as it goes), SIGKILL to what is left after 15 s. */
  stop(): Promise<void>;
}

function spawnTributary(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const profile = process.env.PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.PROFILE_DIR}`] : [];
  return spawn(process.execPath, [...profile, '--import', 'tsx', cli, ...args], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

/** Rejects when `child` exits: a process that dies while the fleet starts fails the start at once. */
function exitOf(child: ChildProcess, what: string): Promise<never> {
  return new Promise((_, reject) =>
    child.once('exit', (code, signal) =>
      reject(new Error(`${what} exited (${signal ?? code}) while starting`)),
    ),
  );
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

export async function startFleet(options: FleetOptions): Promise<Fleet> {
  // LD_LIBRARY_PATH only where the benchmark runs with one: the bundle's node needs its libraries.
  const libraries = process.env.LD_LIBRARY_PATH ? { LD_LIBRARY_PATH: process.env.LD_LIBRARY_PATH } : {};
  const shared = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    ...libraries,
    REDIS_URL: options.redisUrl,
    REDIS_PREFIX: options.prefix,
    GATEWAY_SECRET: BENCH_GATEWAY_SECRET,
    GATEWAY_REPLY_URL: options.replyUrl,
  };
  const ingressUrls: string[] = [];
  const ingress: ChildProcess[] = [];
  for (let i = 0; i < options.ingress; i++) {
    const port = await freePort();
    ingressUrls.push(`http://127.0.0.1:${port}`);
    ingress.push(
      spawnTributary(['ingress'], {
        ...shared,
        PORT: String(port),
        HOST: '127.0.0.1',
        // Each ingress has an admin listener of its own: any free port, so several can run side by side.
        ADMIN_PORT: '0',
        RATE_LIMIT_PER_MINUTE: '100000000',
        REDIS_TIMEOUT_MS: '2500',
        LOG_LEVEL: 'warn',
      }),
    );
  }
  const started = new Set<number>();
  const workers = Array.from({ length: options.workers }, (_, index) => {
    const child = spawnTributary(['worker'], {
      ...shared,
      METRICS_PORT: '0',
      SHUTDOWN_GRACE_MS: '0',
      LOG_LEVEL: 'info',
      ...options.workerEnv,
      ...options.agentEnv,
      AGENT_ENV: Object.keys({ ...options.agentEnv, ...libraries }).join(','),
    });
    onLogLines(child.stdout!, (line) => {
      if (line.includes('"msg":"dispatch"')) options.onDispatch?.(index, JSON.parse(line) as Dispatch);
      else if (line.includes('"msg":"agent process started"')) options.onAgentStarted?.(index);
      else if (line.includes('"msg":"sweeper revived threads"')) {
        options.onTakeover?.((JSON.parse(line) as { takenOver?: number }).takenOver ?? 0);
      } else if (line.includes('"msg":"worker started"')) started.add(index);
    });
    return child;
  });
  const fleet: Fleet = {
    ingressUrls,
    cpuMs: () => ({
      ingress: ingress.map((child) => processCpuMs(child.pid!)),
      workers: workers.map((child) => processCpuMs(child.pid!)),
      agents: workers.reduce((sum, child) => sum + descendantsCpuMs(child.pid!), 0),
    }),
    // The worker's agent warden is a descendant too, and no agent.
    liveAgents: () =>
      workers.reduce((sum, child) => sum + descendants(child.pid!).filter((pid) => !isWarden(pid)).length, 0),
    async stop() {
      await Promise.all([...ingress, ...workers].map(stopProcess));
    },
  };
  const ready = async () => {
    for (const url of ingressUrls) {
      await waitFor(async () => (await fetch(`${url}/readyz`).catch(() => undefined))?.ok || undefined, {
        what: `ingress at ${url} to be ready`,
        timeoutMs: 30_000,
      });
    }
    await waitFor(() => started.size === options.workers || undefined, {
      what: `${options.workers} workers to start`,
      timeoutMs: 30_000,
    });
  };
  const died = [
    ...ingress.map((child) => exitOf(child, 'an ingress process')),
    ...workers.map((child) => exitOf(child, 'a worker')),
  ];
  try {
    await Promise.race([ready(), ...died]);
  } catch (error) {
    await fleet.stop();
    throw error;
  }
  return fleet;
}
