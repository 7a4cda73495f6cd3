/**
 * Memory per ACP session: the resident and proportional set size (RSS, PSS; PSS splits pages shared
 * between processes, such as the node binary, among them) of agent process groups holding sessions,
 * for one process carrying 1 or N sessions against N processes carrying one each. Each session gets
 * one short turn. Agents: the built-in agent (node + tsx loader, as the worker runs it) and a
 * minimal agent on the ACP SDK in plain node (the floor of any Node agent).
 *
 *   [AGENT_COMMAND='your-agent --acp'] npm run bench:agent-memory [-- --sessions 8] [-- --smoke]
 *
 * Prints a Markdown table; docs/adr/0015 holds one run.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type AgentCommandConfig, AgentProcess } from '@tributary/acp';
import { agentMemory, type Memory } from '@tributary/acp/process-memory';
import { builtInAgentCommand } from '@tributary/agent';
import { splitCommandLine } from '@tributary/config';
import { type Cell, resultOptions, sizeOption, writeBenchResult } from './bench-result.js';
import { rounded } from './stats.js';

const { values } = parseArgs({ options: { ...resultOptions, sessions: { type: 'string' } } });
const sessions = sizeOption(values, 'sessions', 8, 2);
const scratch = await mkdtemp(join(tmpdir(), 'tributary-agent-memory-'));

// The smallest agent the SDK allows: one chunk and end_turn per prompt, sessions in a Set.
const minimalAgent = join(scratch, 'minimal-agent.mjs');
await writeFile(
  minimalAgent,
  `import { Readable, Writable } from 'node:stream';
import { agent, methods, ndJsonStream } from ${JSON.stringify(import.meta.resolve('@agentclientprotocol/sdk'))};
const sessions = new Set();
const app = agent({ name: 'minimal' })
  .onRequest(methods.agent.initialize, () => ({ protocolVersion: 1, agentCapabilities: {}, authMethods: [] }))
  .onRequest(methods.agent.session.new, () => {
    const sessionId = crypto.randomUUID();
    sessions.add(sessionId);
    return { sessionId };
  })
  .onRequest(methods.agent.session.prompt, async ({ params, client }) => {
    await client.notify(methods.client.session.update, {
      sessionId: params.sessionId,
      update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'ok' } },
    });
    return { stopReason: 'end_turn' };
  })
  .onNotification(methods.agent.session.cancel, () => undefined);
const connection = app.connect(ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
await connection.closed;
process.exit(0);
`,
);

const agents: { name: string; config: AgentCommandConfig }[] = [
  {
    name: 'built-in agent (node + tsx)',
    config: { ...builtInAgentCommand(), env: { TRIBUTARY_AGENT_STATE_DIR: join(scratch, 'state') } },
  },
  { name: 'minimal SDK agent (plain node)', config: { command: process.execPath, args: [minimalAgent] } },
];
// The agent a worker will run, to size the worker for it (infra/k8s/README.md, "Worker sizing").
if (process.env.AGENT_COMMAND) {
  const [command, ...args] = splitCommandLine('AGENT_COMMAND', process.env.AGENT_COMMAND);
  agents.push({ name: `AGENT_COMMAND (${command})`, config: { command: command!, args } });
}

const sum = (memories: Memory[]): Memory =>
  memories.reduce((a, b) => ({
    rssKb: a.rssKb + b.rssKb,
    pssKb: a.pssKb + b.pssKb,
    processes: a.processes + b.processes,
  }));

async function start(config: AgentCommandConfig): Promise<{ agent: AgentProcess; startMs: number }> {
  const began = performance.now();
  const agent = await AgentProcess.start({ ...config, cwd: scratch });
  return { agent, startMs: performance.now() - began };
}

async function openWithTurn(agent: AgentProcess, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const { sessionId } = await agent.openNewSession(scratch);
    await agent.prompt(sessionId, [{ type: 'text', text: `hello from session ${i}` }]);
  }
}

/** Lets start-up garbage be collected and lazily loaded code settle before measuring. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 1_000));

const print = (line: string) => process.stdout.write(`${line}\n`);
const mb = (kb: number) => (kb / 1024).toFixed(1);
const rows: string[] = [];
const results: Cell[][] = [];
try {
  for (const { name, config } of agents) {
    const shared = await start(config);
    await settle();
    const idle = await agentMemory(shared.agent.pid);
    await openWithTurn(shared.agent, 1);
    await settle();
    const one = await agentMemory(shared.agent.pid);
    await openWithTurn(shared.agent, sessions - 1);
    await settle();
    const many = await agentMemory(shared.agent.pid);
    await shared.agent.kill();

    const separate = [];
    for (let i = 0; i < sessions; i++) separate.push(await start(config));
    for (const { agent } of separate) await openWithTurn(agent, 1);
    await settle();
    const apart = sum(await Promise.all(separate.map(({ agent }) => agentMemory(agent.pid))));
    await Promise.all(separate.map(({ agent }) => agent.kill()));
    const startMs = separate.map((s) => s.startMs).sort((a, b) => a - b)[Math.floor(sessions / 2)]!;

    const perSessionShared = (many.pssKb - one.pssKb) / (sessions - 1);
    const perSessionApart = apart.pssKb / sessions;
    const mbNumber = (kb: number) => Number(mb(kb));
    results.push([
      name,
      mbNumber(idle.pssKb),
      mbNumber(one.pssKb),
      mbNumber(many.pssKb),
      mbNumber(apart.pssKb),
      mbNumber(perSessionShared),
      mbNumber(perSessionApart),
      Math.round(startMs),
    ]);
    rows.push(
      `| ${name} | ${mb(idle.rssKb)} / ${mb(idle.pssKb)} | ${mb(one.rssKb)} / ${mb(one.pssKb)} | ${mb(many.rssKb)} / ${mb(many.pssKb)} | ${mb(apart.rssKb)} / ${mb(apart.pssKb)} (${apart.processes} processes) | ${mb(perSessionShared)} | ${mb(perSessionApart)} | ${Math.round(startMs)} |`,
    );
  }
} finally {
  await rm(scratch, { recursive: true, force: true });
}

const n = sessions;
print(
  `| agent | idle process, RSS / PSS MB | 1 process, 1 session | 1 process, ${n} sessions | ${n} processes, 1 session each | PSS per extra session, shared process (MB) | PSS per session, own process (MB) | start + initialize, median ms |`,
);
print('| --- | --- | --- | --- | --- | --- | --- | --- |');
for (const row of rows) print(row);
print(`\n(sessions=${n}, node ${process.version})`);
const perSession = (row: Cell[] | undefined) => Number(row?.[6]);
await writeBenchResult(values, {
  name: 'agent-memory',
  title: 'Memory per ACP session: one process for many sessions against a process per session',
  columns: [
    'agent',
    'idle process PSS (MB)',
    '1 process, 1 session PSS (MB)',
    `1 process, ${n} sessions PSS (MB)`,
    `${n} processes PSS (MB)`,
    'PSS per extra session, shared process (MB)',
    'PSS per session, own process (MB)',
    'start + initialize, median ms',
  ],
  rows: results,
  ratios: {
    builtin_over_minimal_pss_per_session: rounded(perSession(results[0]) / perSession(results[1])),
  },
  notes: [`${n} sessions; PSS splits pages shared between processes among them.`],
});
