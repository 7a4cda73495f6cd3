/**
 * Measures the published coding agents offline, against the fake model API on 127.0.0.1, for the
 * figures in docs/agents.md ("Measured"). Not part of `npm test`, which runs only one shell command per
 * agent (sandboxed-agents.e2e.test.ts); it takes the agents from an install of your own:
 *
 *   npm install --prefix /tmp/agents @zed-industries/claude-agent-acp@0.23.1 \
 *     @zed-industries/codex-acp@0.16.0 @google/gemini-cli@0.61.0
 *   npx tsx test/agents/measure.ts --agents /tmp/agents [--only claude,codex] [--checks startup,kill]
 *     [--rounds 3]
 *
 * Checks (all by default):
 *   startup     the agent alone, as a worker starts it: start + initialize, session/new, the prompt's
 *               model request, first token and answer (`--rounds` times, each a new process)
 *   stdin       whether the agent (and what it started) ends when its stdin closes, idle and mid-turn
 *   new-thread  through ingress and a worker: a new thread's ack → model request → reply, with
 *               AGENT_WARM_SPARES 0 and 1
 *   kill        SIGKILL of the worker mid-turn: when its agent's processes are gone, when the model
 *               stream stops, and how often the re-run on the other worker shows the message
 *   kill-tool   SIGKILL of the worker while a shell command of the agent runs: does the command end
 *   cancel      /cancel mid-turn, then the next message: its reply and whether the worker repaired it
 *   shell       a shell command the model asks for, with AGENT_PERMISSION_POLICY allow-once and reject
 *   escalated   codex only: the same, asked to run outside its sandbox (an approval request)
 *   websocket   codex only: `-c openai_base_url=…` instead of a model_providers entry
 * Each agent gets a fresh HOME (under ~/.cache/tributary-agent-homes, removed afterwards). Prints one JSON line per result, with the machine's load average.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { homedir, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { AgentFleet } from './agent-fleet.js';
import { AGENT_NAMES, type AgentName, agentProfile } from './agent-profiles.js';
import { startupSample, stdinEof } from './agent-startup.js';
import { startFakeModelServer } from './fake-model-server.js';
import { SCENARIOS, type Scenario } from './fleet-scenarios.js';

const CHECKS = ['startup', 'stdin', ...Object.keys(SCENARIOS)] as const;

const { values } = parseArgs({
  options: {
    agents: { type: 'string' },
    only: { type: 'string', default: AGENT_NAMES.join(',') },
    checks: { type: 'string', default: CHECKS.join(',') },
    rounds: { type: 'string', default: '3' },
  },
});
if (!values.agents) {
  process.stderr.write(
    'usage: measure.ts --agents <npm prefix holding the agents> [--only …] [--checks …]\n',
  );
  process.exit(2);
}
const agents = values.only.split(',') as AgentName[];
const checks = values.checks.split(',');
const rounds = Number(values.rounds);
const bin = join(values.agents, 'node_modules/.bin');
const homes = join(homedir(), '.cache', 'tributary-agent-homes');

const load = () => loadavg().map((n) => Math.round(n * 10) / 10);
const report = (agent: AgentName, check: string, result: unknown) =>
  process.stdout.write(`${JSON.stringify({ agent, check, load: load(), result })}\n`);

const model = await startFakeModelServer({ slowWordMs: 1000 });
try {
  for (const name of agents) {
    const profile = agentProfile(name, model.url);
    // Not under the temp dir: codex refuses to create its sandbox helper there (docs/agents.md).
    await mkdir(homes, { recursive: true });
    const home = await mkdtemp(join(homes, `${name}-`));
    const env = { PATH: `${bin}:${process.env.PATH}`, HOME: home };
    try {
      if (checks.includes('startup')) {
        for (let round = 0; round < rounds; round++) {
          report(name, 'startup', await startupSample(profile, model, env, home));
        }
      }
      if (checks.includes('stdin')) {
        report(name, 'stdin', await stdinEof(profile, model, env, home, 10_000));
      }
      const scenarios = Object.entries(SCENARIOS).filter(([check]) => checks.includes(check));
      for (const [check, scenario] of scenarios as [string, Scenario][]) {
        if (scenario.only && scenario.only !== name) continue;
        const fleet = await AgentFleet.start(profile, model, env);
        try {
          report(name, check, await scenario.run(fleet, rounds));
        } catch (error) {
          report(name, check, { failed: (error as Error).message });
        } finally {
          await fleet.close();
        }
      }
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  }
} finally {
  await model.close();
}
