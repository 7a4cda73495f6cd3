/**
 * Start-up and memory of the production processes run through tsx (TypeScript compiled on load) and
 * as JavaScript compiled ahead of time (infra/docker/compile-js.mjs, as the image does), interleaved
 * round by round: ms from spawn until /livez answers (the code is loaded and serving) and until
 * /readyz answers 200 (dependencies checked too), and the RSS then (ingress, worker); ms until the
 * built-in agent answers `initialize` and its RSS (a worker starts one per session).
 *
 *   npm run bench:startup [-- --rounds 5]
 *
 * Prints a Markdown table with compiled/tsx ratios; docs/adr holds one run.
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

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' } } });
const rounds = Number(values.rounds);
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

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const print = (line: string) => process.stdout.write(`${line}\n`);
print(`Node ${process.versions.node}, ${rounds} interleaved rounds, medians.\n`);
print('The agent has no HTTP endpoints: its "live" and "ready" are both its `initialize` answer.\n');
print('| process | mode | ms to live | ms to ready | RSS MB |');
print('|---|---|---|---|---|');
const ratio = (a: number, b: number) => `×${(a / b).toFixed(2)}`;
for (const subject of Object.keys(subjects)) {
  const tsx = samples.get(`${subject}|tsx`)!;
  const js = samples.get(`${subject}|compiled`)!;
  const t = { live: median(tsx.liveMs), ready: median(tsx.ms), kb: median(tsx.kb) };
  const c = { live: median(js.liveMs), ready: median(js.ms), kb: median(js.kb) };
  print(
    `| ${subject} | tsx | ${Math.round(t.live)} | ${Math.round(t.ready)} | ${(t.kb / 1024).toFixed(1)} |`,
  );
  print(
    `| ${subject} | compiled | ${Math.round(c.live)} (${ratio(c.live, t.live)}) | ${Math.round(c.ready)} (${ratio(c.ready, t.ready)}) | ${(c.kb / 1024).toFixed(1)} (${ratio(c.kb, t.kb)}) |`,
  );
}
