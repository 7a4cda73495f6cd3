/**
 * Start-up and memory of the production processes run through tsx (TypeScript compiled on load) and
 * as JavaScript compiled ahead of time (infra/docker/compile-js.mjs, as the image does), interleaved
 * round by round: ms from spawn until /livez answers (the code is loaded and serving) and until
 * /readyz answers 200 (dependencies checked too), and the RSS then (ingress, worker); ms until the
 * built-in agent answers `initialize` and its RSS (a worker starts one per session).
 *
 *   npm run bench:startup [-- --rounds 5] [-- --smoke]
 *
 * Ratios are compiled over tsx; docs/adr/0021 holds one run.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type AgentCommandConfig, AgentProcess } from '@tributary/acp';
import { builtInAgentCommand } from '@tributary/agent';
import { freePort, startRedis, uniquePrefix, waitFor } from '@tributary/testkit';
import { type Cell, formatTable, resultOptions, sizeOption, writeBenchResult } from './bench-result.js';
import { median, rounded } from './stats.js';

const { values } = parseArgs({ options: { ...resultOptions, rounds: { type: 'string' } } });
const rounds = sizeOption(values, 'rounds', 5, 1);
const repo = fileURLToPath(new URL('..', import.meta.url));
const log = (line: string) => process.stderr.write(`${line}\n`);

/**
 * A copy of the workspaces compiled to JavaScript, resolving third-party packages from the
 * repository's node_modules and its own workspaces from the copy.
 */
async function compiledCopy(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'tributary-compiled-'));
  const names: Record<string, string> = {};
  for (const group of ['apps', 'packages']) {
    for (const name of await readdir(join(repo, group))) {
      const from = join(repo, group, name);
      await cp(from, join(root, group, name), {
        recursive: true,
        filter: (path) => !/\/(test|node_modules)(\/|$)/.test(path.slice(from.length)),
      });
      const manifest = JSON.parse(await readFile(join(from, 'package.json'), 'utf8')) as { name: string };
      names[manifest.name] = join(root, group, name);
    }
  }
  await mkdir(join(root, 'node_modules', '@tributary'), { recursive: true });
  for (const entry of await readdir(join(repo, 'node_modules'))) {
    if (entry !== '@tributary')
      await symlink(join(repo, 'node_modules', entry), join(root, 'node_modules', entry));
  }
  for (const [name, dir] of Object.entries(names)) await symlink(dir, join(root, 'node_modules', name));
  execFileSync(process.execPath, [join(repo, 'infra/docker/compile-js.mjs'), root], { stdio: 'inherit' });
  return root;
}

const compiled = await compiledCopy();
const redis = await startRedis();
const modes = {
  tsx: { cli: [join(repo, 'apps/cli/bin/tributary.js')], agent: builtInAgentCommand() },
  compiled: {
    cli: [join(compiled, 'apps/cli/src/main.js')],
    agent: { command: process.execPath, args: [join(compiled, 'apps/agent/src/main.js')] },
  },
} as const;
type Mode = keyof typeof modes;

const rssKb = async (pid: number) =>
  Number(/^VmRSS:\s+(\d+) kB/m.exec(await readFile(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** ms from spawn to an answer from /livez and to a 200 from /readyz, and the RSS at that moment. */
async function startProcess(mode: Mode, command: 'ingress' | 'worker') {
  const port = await freePort();
  const env = {
    PATH: process.env.PATH,
    REDIS_URL: redis.url,
    REDIS_PREFIX: uniquePrefix('startup'),
    GATEWAY_SECRET: 'startup-bench-gateway-secret',
    LOG_LEVEL: 'warn',
    ...(command === 'ingress' ? { PORT: String(port), HOST: '127.0.0.1' } : { METRICS_PORT: String(port) }),
  };
  const began = performance.now();
  const child = spawn(process.execPath, [...modes[mode].cli, command], { env, stdio: 'ignore' });
  const answers = async (path: string) =>
    (await fetch(`http://127.0.0.1:${port}${path}`).catch(() => undefined))?.ok;
  const poll = { timeoutMs: 60_000, intervalMs: 5 };
  await waitFor(() => answers('/livez'), { ...poll, what: `${mode} ${command} live` });
  const liveMs = performance.now() - began;
  await waitFor(() => answers('/readyz'), { ...poll, what: `${mode} ${command} ready` });
  const ms = performance.now() - began;
  const kb = await rssKb(child.pid!);
  await stop(child);
  return { liveMs, ms, kb };
}

/** ms from spawn to the agent's `initialize` answer, and its RSS then. */
async function startAgent(mode: Mode) {
  const scratch = await mkdtemp(join(tmpdir(), 'tributary-startup-agent-'));
  const config: AgentCommandConfig = { ...modes[mode].agent, env: { TRIBUTARY_AGENT_STATE_DIR: scratch } };
  const began = performance.now();
  const agent = await AgentProcess.start({ ...config, cwd: scratch });
  const ms = performance.now() - began;
  const kb = await rssKb(agent.pid);
  await agent.kill();
  await rm(scratch, { recursive: true, force: true });
  return { liveMs: ms, ms, kb };
}

const subjects = {
  ingress: (mode: Mode) => startProcess(mode, 'ingress'),
  worker: (mode: Mode) => startProcess(mode, 'worker'),
  'built-in agent': startAgent,
};
const samples = new Map<string, { liveMs: number[]; ms: number[]; kb: number[] }>();
try {
  for (let round = 0; round < rounds; round++) {
    // Alternate which mode goes first, so neither always meets a warmer page cache.
    const order: Mode[] = round % 2 === 0 ? ['tsx', 'compiled'] : ['compiled', 'tsx'];
    for (const [subject, run] of Object.entries(subjects)) {
      for (const mode of order) {
        const { liveMs, ms, kb } = await run(mode);
        const key = `${subject}|${mode}`;
        const entry = samples.get(key) ?? { liveMs: [], ms: [], kb: [] };
        entry.liveMs.push(liveMs);
        entry.ms.push(ms);
        entry.kb.push(kb);
        samples.set(key, entry);
      }
    }
    log(`round ${round + 1}/${rounds} done`);
  }
} finally {
  await redis.stop();
  await rm(compiled, { recursive: true, force: true });
}

const rows: Cell[][] = [];
const ratios: Record<string, number> = {};
for (const subject of Object.keys(subjects)) {
  const figures = (mode: Mode) => {
    const runs = samples.get(`${subject}|${mode}`)!;
    return { live: median(runs.liveMs), ready: median(runs.ms), mb: median(runs.kb) / 1024 };
  };
  const tsx = figures('tsx');
  const js = figures('compiled');
  for (const [mode, f] of [
    ['tsx', tsx],
    ['compiled', js],
  ] as const) {
    rows.push([subject, mode, Math.round(f.live), Math.round(f.ready), rounded(f.mb, 1)]);
  }
  const key = subject.replaceAll(' ', '_');
  ratios[`${key}_compiled_over_tsx_ready`] = rounded(js.ready / tsx.ready);
  ratios[`${key}_compiled_over_tsx_rss`] = rounded(js.mb / tsx.mb);
}
const columns = ['process', 'mode', 'ms to live', 'ms to ready', 'RSS MB'];
process.stdout.write(`${formatTable(columns, rows)}\n`);
await writeBenchResult(values, {
  name: 'startup',
  title: 'Start-up and memory: tsx against compiled JavaScript',
  columns,
  rows,
  ratios,
  charts: [
    { title: 'ms to ready', x: 'process', y: 'ms to ready', group: 'mode' },
    { title: 'RSS MB', x: 'process', y: 'RSS MB', group: 'mode' },
  ],
  notes: [
    `Node ${process.versions.node}, medians of ${rounds} interleaved rounds, the order of the modes alternating.`,
    'live: /livez answers (code loaded and serving); ready: /readyz answers 200 (dependencies checked). The agent has no HTTP endpoints: both are its `initialize` answer.',
  ],
});
