/**
 * The built-in agent's cost per turn as its conversations grow: on one agent process, a group of S
 * sessions prompted to turn T and a group prompted to about turn 10 (the baseline), with the same packed
 * message every turn; the agent's CPU (the scheduler's run time of its threads) and bytes written (/proc io wchar: session
 * files, stdout, stderr) per turn of each group over its last `window` turns, taken in alternation. An agent that rewrote its session history on
 * every turn would show both growing with the turn number; one that appends shows them flat.
 *
 *   npm run bench:agent-turns [-- --sessions 64 --turns 200 --window 10] [-- --smoke]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { AgentProcess } from '@tributary/acp';
import { builtInAgentCommand } from '@tributary/agent';
import { type ArrivalEvent, packBatch } from '@tributary/packing';
import { type Cell, formatTable, resultOptions, sizeOption, writeBenchResult } from './bench-result.js';
import { processBytesWritten, processCpuMsFine } from './process-cpu.js';
import { rounded } from './stats.js';

const { values } = parseArgs({
  options: {
    ...resultOptions,
    sessions: { type: 'string' },
    turns: { type: 'string' },
    window: { type: 'string' },
  },
});
const sessions = sizeOption(values, 'sessions', 64, 2);
const turns = sizeOption(values, 'turns', 200, 30);
const window = sizeOption(values, 'window', 10, 5);
const BASELINE_TURN = 10;
if (turns < BASELINE_TURN + window)
  throw new RangeError(`--turns must be at least ${BASELINE_TURN + window}`);

const event: ArrivalEvent = {
  eventId: 'm1',
  platform: 'gateway',
  channelId: 'room',
  threadId: 't1',
  sender: { id: 'ualice', name: 'alice', displayName: 'Alice', isBot: false },
  timestamp: new Date(0).toISOString(),
  text: `is the build green yet? ${'the logs say something about a flaky test. '.repeat(8)}`,
  attachments: [],
};
const prompt = packBatch([event], { image: false, audio: false, embeddedContext: false });

const scratch = await mkdtemp(join(tmpdir(), 'tributary-agent-turns-'));
const agent = await AgentProcess.start({
  ...builtInAgentCommand(),
  env: { TRIBUTARY_AGENT_STATE_DIR: join(scratch, 'state') },
  cwd: scratch,
});

interface Window {
  /** The turns measured, 1-based, of every session in the group. */
  from: number;
  to: number;
  cpuMs: number;
  bytes: number;
}

/** Prompts every session of a group once, adding what the agent spent to the group's window. */
async function round(ids: string[], into: Window): Promise<void> {
  const cpuMs = processCpuMsFine(agent.pid);
  const bytes = processBytesWritten(agent.pid);
  for (const id of ids) await agent.prompt(id, prompt);
  into.cpuMs += processCpuMsFine(agent.pid) - cpuMs;
  into.bytes += processBytesWritten(agent.pid) - bytes;
}

// Two groups of sessions, measured in alternating rounds over the same stretch of time, so neither
// window gets the JIT's first pass or a quieter moment of the machine: the baseline group around turn
// 10, the other at the last turns.
const early: Window = { from: BASELINE_TURN - Math.floor(window / 2), to: 0, cpuMs: 0, bytes: 0 };
early.to = early.from + window - 1;
const late: Window = { from: turns - window + 1, to: turns, cpuMs: 0, bytes: 0 };
try {
  const open = async () => (await agent.openNewSession(scratch)).sessionId;
  const short: string[] = [];
  const long: string[] = [];
  for (let i = 0; i < sessions; i++) {
    short.push(await open());
    long.push(await open());
  }
  for (let turn = 1; turn < late.from; turn++) {
    for (const id of long) await agent.prompt(id, prompt);
    if (turn < early.from) for (const id of short) await agent.prompt(id, prompt);
  }
  for (let r = 0; r < window; r++) {
    const order: [string[], Window][] = [
      [short, early],
      [long, late],
    ];
    for (const [ids, into] of r % 2 === 0 ? order : order.reverse()) await round(ids, into);
  }
} finally {
  await agent.kill();
  await rm(scratch, { recursive: true, force: true });
}
const windows = [early, late];

const perTurn = (w: Window) => ({
  cpuMs: w.cpuMs / (window * sessions),
  bytes: w.bytes / (window * sessions),
});
const [first, last] = windows.map(perTurn) as [ReturnType<typeof perTurn>, ReturnType<typeof perTurn>];
const columns = ['turns', 'agent CPU ms per turn', 'bytes written per turn'];
const rows: Cell[][] = windows.map((w, i) => [
  `${w.from}-${w.to}${i === 0 ? ' (baseline)' : ''}`,
  rounded(perTurn(w).cpuMs, 3),
  Math.round(perTurn(w).bytes),
]);
process.stdout.write(`\n${formatTable(columns, rows)}\n`);
await writeBenchResult(values, {
  name: 'agent-turns',
  title: "The built-in agent's cost per turn as the conversation grows",
  columns,
  rows,
  ratios: {
    cpu_per_turn_late_over_turn_10: rounded(last.cpuMs / first.cpuMs),
    bytes_per_turn_late_over_turn_10: rounded(last.bytes / first.bytes, 3),
  },
  charts: [{ title: 'Agent CPU per turn', x: 'turns', y: 'agent CPU ms per turn' }],
  notes: [
    `One built-in agent process, two groups of ${sessions} sessions, the same packed message every turn: one group taken to turn ${turns}, the other to about turn ${BASELINE_TURN} (the baseline); the ${window} turns of each window alternate between the groups, so both are measured over the same stretch of time on warm code.`,
    'CPU: the run time of the agent process’s threads (/proc task sched, nanoseconds), summed over the window. Bytes: /proc io wchar, every write(2) of the process (session files, protocol on stdout, log on stderr).',
  ],
});
