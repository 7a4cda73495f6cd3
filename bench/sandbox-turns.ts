/**
 * What the sandbox costs a turn once the agent runs: on warm agents of the built-in kind, the same
 * turns with no sandbox, in bubblewrap, and through an agent host (its own sandbox off, so what is
 * measured is the socket and its frames, docs/adr/0045); a text turn and a turn with a shell tool call
 * each. Per turn: the latency from session/prompt to its answer, and the CPU of everything involved
 * (this process as the worker's ACP client, the agent and all it started, the agent host). Rounds
 * take the configurations in turn, in rotating order, so each sees the same stretch of time.
 *
 *   npm run bench:sandbox-turns [-- --rounds 150] [-- --smoke]
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  type AgentLauncher,
  AgentProcess,
  type AgentSandbox,
  localLauncher,
  noSandbox,
  remoteLauncher,
} from '@tributary/acp';
import { HostLease } from '@tributary/acp/host-lease';
import { builtInAgentCommand } from '@tributary/agent';
import { waitFor } from '@tributary/testkit';
import { localSandbox } from '@tributary/worker';
import { type Cell, formatTable, resultOptions, sizeOption, writeBenchResult } from './bench-result.js';
import { treeCpuMsFine } from './process-cpu.js';
import { median, percentile, rounded } from './stats.js';

// Everything on one CPU: on a machine of few cores, which core each process lands on moves its CPU
// time per turn by more than the sandbox does (measured: ±15% between two runs unpinned).
if (process.env.TRIBUTARY_BENCH_PINNED === undefined) {
  const pinned = spawnSync(
    'taskset',
    ['-c', String(cpus().length - 1), process.execPath, ...process.execArgv, ...process.argv.slice(1)],
    { stdio: 'inherit', env: { ...process.env, TRIBUTARY_BENCH_PINNED: '1' } },
  );
  process.exit(pinned.status ?? 1);
}

const { values } = parseArgs({ options: { ...resultOptions, rounds: { type: 'string' } } });
const rounds = sizeOption(values, 'rounds', 150, 6);
const WARMUP_ROUNDS = Math.min(10, Math.floor(rounds / 3));

const TURNS = {
  text: `is the build green yet? ${'the logs say something about a flaky test. '.repeat(30)}`,
  shell: `@agent ${JSON.stringify({ shell: 'echo "turn $(date +%s%N)" >> notes.txt && tail -n 3 notes.txt && ls' })}`,
} as const;
type TurnKind = keyof typeof TURNS;

interface Configuration {
  name: 'off' | 'bubblewrap' | 'agent-host';
  agent: AgentProcess;
  sessionId: string;
  /** The processes whose CPU the turn costs besides this one: the agent's tree, or the host's. */
  cpuRoot: number;
  samples: Record<TurnKind, { ms: number[]; cpuMs: number[] }>;
}

const scratch = await mkdtemp(join(tmpdir(), 'tributary-sandbox-turns-'));
const bin = fileURLToPath(new URL('../apps/cli/bin/tributary.js', import.meta.url));
let host: ChildProcess | undefined;
let lease: HostLease | undefined;
let pulse: NodeJS.Timeout | undefined;

async function startConfiguration(
  name: Configuration['name'],
  sandbox: AgentSandbox,
  launcher: AgentLauncher,
  cpuRoot?: number,
): Promise<Configuration> {
  const room = { workspace: join(scratch, name, 'workspace'), home: join(scratch, name, 'home') };
  await Promise.all([mkdir(room.workspace, { recursive: true }), mkdir(room.home, { recursive: true })]);
  const agent = await AgentProcess.start({
    ...builtInAgentCommand(),
    cwd: room.workspace,
    home: room.home,
    launcher,
    inheritEnv: ['PATH'],
    // Unsandboxed the agent keeps this process's HOME: its state goes to the room all the same.
    env: {
      TRIBUTARY_AGENT_SCRIPTING: 'on',
      ...(sandbox.kind === 'off' ? { TRIBUTARY_AGENT_STATE_DIR: room.home } : {}),
    },
  });
  const { sessionId } = await agent.openNewSession(sandbox.sessionCwd(room));
  const samples = { text: { ms: [], cpuMs: [] }, shell: { ms: [], cpuMs: [] } };
  return { name, agent, sessionId, cpuRoot: cpuRoot ?? agent.pid, samples };
}

/** `tributary agent-host` with its sandbox off, and a lease held for this run as a warden would. */
async function startAgentHost(): Promise<{ launcher: AgentLauncher; pid: number }> {
  const socketPath = join(scratch, 'agent-host.sock');
  host = spawn(process.execPath, [bin, 'agent-host'], {
    env: { PATH: process.env.PATH, AGENT_HOST_SOCKET: socketPath, AGENT_SANDBOX: 'off', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await waitFor(() => existsSync(socketPath), { what: 'the agent host to listen', timeoutMs: 40_000 });
  lease = new HostLease(socketPath, 60_000, () => {});
  await lease.ready;
  pulse = setInterval(() => lease?.pulse(), 100);
  return { launcher: remoteLauncher(socketPath, () => lease?.ticket), pid: host.pid! };
}

function log(message: string): void {
  process.stderr.write(`sandbox-turns: ${message}\n`);
}

const bubblewrap = await localSandbox({ agentSandbox: 'bubblewrap', agentSandboxRead: [] });
const hosted = await startAgentHost();
const configurations = [
  await startConfiguration('off', noSandbox, localLauncher(noSandbox)),
  await startConfiguration('bubblewrap', bubblewrap, localLauncher(bubblewrap)),
  await startConfiguration('agent-host', noSandbox, hosted.launcher, hosted.pid),
];
log(`${configurations.length} warm agents; ${rounds} rounds (${WARMUP_ROUNDS} of warm-up)`);

async function turn(configuration: Configuration, kind: TurnKind, record: boolean): Promise<void> {
  // Each walk of /proc outside the span this process's CPU is taken over: a deeper tree costs more to read.
  const treeBefore = treeCpuMsFine(configuration.cpuRoot);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const { stopReason } = await configuration.agent.prompt(configuration.sessionId, [
    { type: 'text', text: TURNS[kind] },
  ]);
  const ms = performance.now() - started;
  if (stopReason !== 'end_turn') throw new Error(`${configuration.name} ${kind}: stop reason ${stopReason}`);
  const own = process.cpuUsage(cpuBefore);
  const cpuMs = (own.user + own.system) / 1000 + treeCpuMsFine(configuration.cpuRoot) - treeBefore;
  if (!record) return;
  configuration.samples[kind].ms.push(ms);
  configuration.samples[kind].cpuMs.push(cpuMs);
}

try {
  for (let round = 0; round < rounds; round++) {
    const order = configurations.map((_, i) => configurations[(i + round) % configurations.length]!);
    for (const configuration of order) {
      for (const kind of Object.keys(TURNS) as TurnKind[])
        await turn(configuration, kind, round >= WARMUP_ROUNDS);
    }
    if ((round + 1) % 25 === 0) log(`${round + 1}/${rounds} rounds`);
  }
} finally {
  for (const configuration of configurations) await configuration.agent.kill({ now: true });
  clearInterval(pulse);
  lease?.close();
  host?.kill('SIGTERM');
  await rm(scratch, { recursive: true, force: true });
}

const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;
const baseline = configurations[0]!;
const columns = [
  'sandbox',
  'turn',
  'p50 ms',
  'p95 ms',
  'CPU ms per turn',
  'p50 over no sandbox',
  'CPU over no sandbox',
];
const ratios: Record<string, number> = {};
const rows: Cell[][] = configurations.flatMap((configuration) =>
  (Object.keys(TURNS) as TurnKind[]).map((kind) => {
    const { ms, cpuMs } = configuration.samples[kind];
    const base = baseline.samples[kind];
    const latency = rounded(median(ms) / median(base.ms), 3);
    const cpu = rounded(mean(cpuMs) / mean(base.cpuMs), 3);
    if (configuration !== baseline) {
      const key = configuration.name.replace('-', '_');
      ratios[`${key}_${kind}_p50_over_off`] = latency;
      ratios[`${key}_${kind}_cpu_over_off`] = cpu;
    }
    return [
      configuration.name,
      kind,
      rounded(median(ms), 1),
      rounded(percentile(ms, 95), 1),
      rounded(mean(cpuMs), 2),
      latency,
      cpu,
    ];
  }),
);
process.stdout.write(`\n${formatTable(columns, rows)}\n`);
const path = await writeBenchResult(values, {
  name: 'sandbox-turns',
  title: 'What the sandbox costs a turn of a warm agent',
  columns,
  rows,
  ratios,
  charts: [{ title: 'CPU per turn', x: 'sandbox', y: 'CPU ms per turn', group: 'turn' }],
  notes: [
    `${rounds - WARMUP_ROUNDS} rounds after ${WARMUP_ROUNDS} of warm-up; each round runs a text turn and a shell-tool turn on each of three warm built-in agents, one session each, the configurations in rotating order.`,
    'off: a child of this process; bubblewrap: the sandbox a worker starts agents in by default; agent-host: through `tributary agent-host` over its socket, with its own sandbox off, so the figure is the cost of the socket and its frames.',
    'Every process of the run on one CPU (taskset), the same for every configuration.',
    'Latency: session/prompt sent → its answer. CPU: this process (the ACP client, as in the worker) plus the agent and everything below it, or the agent host and everything below it; live processes to the nanosecond, reaped tool processes in clock ticks. Latency as medians; CPU as means, since a reaped tool’s ticks land in some turns and not others.',
  ],
});
log(`written to ${path}`);
