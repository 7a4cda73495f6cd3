// The published coding agents, each started by a real worker in its bubblewrap sandbox, run a whole
// turn in which their model (the fake one) has them run a shell command: the command's file lands in
// the thread's workspace on the host, and what it printed shows it ran inside the sandbox.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { waitFor } from '@tributary/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Fleet, startFleet } from '../../apps/worker/test/fleet/fleet.js';
import { message } from '../../apps/worker/test/worker-fixture.js';
import { type AgentName, agentProfile } from './agent-profiles.js';
import { type FakeModelServer, startFakeModelServer } from './fake-model-server.js';
import { installPublishedAgents } from './published-agents.js';

// message() writes in this thread; its room is {AGENT_WORKSPACES}/gateway/C1/T1.
const THREAD = 'gateway:C1:T1';

let prefix = '';
let model: FakeModelServer;
let fleet: Fleet | undefined;

beforeAll(async () => {
  prefix = await installPublishedAgents((line) => process.stderr.write(`${line}\n`));
  model = await startFakeModelServer();
}, 15 * 60_000);

afterAll(async () => {
  await model?.close();
});

afterEach(async () => {
  await fleet?.close();
  fleet = undefined;
});

/**
 * Worker settings beyond the agent's profile, and what its command finds. codex's mode
 * `auto` (docs/agents.md, "Codex's own sandbox inside ours") writes the workspace through codex's own
 * bwrap, nested in ours, which leaves the agent home read-only and puts the command in a PID namespace
 * of its own; the others run their commands in ours alone, where the home is writable.
 */
const SETTINGS: Record<
  AgentName,
  { env: Record<string, string>; home: string; pidNamespaces: number; permissionRequests: number }
> = {
  // Claude Code and Gemini CLI ask before every shell command; codex does not for one its sandbox holds.
  claude: { env: {}, home: 'home-writable', pidNamespaces: 1, permissionRequests: 1 },
  codex: {
    env: { AGENT_SESSION_MODE: 'auto' },
    home: 'home-readonly',
    pidNamespaces: 2,
    permissionRequests: 0,
  },
  gemini: { env: {}, home: 'home-writable', pidNamespaces: 1, permissionRequests: 1 },
};

describe('published agents in the bubblewrap sandbox run a shell command for their model', {
  timeout: 240_000,
}, () => {
  it.each(['claude', 'codex', 'gemini'] as const)('%s', async (name) => {
    const f = await startFleet({});
    fleet = f;
    const workspaces = await f.tempDir();
    const worker = await f.spawn({
      env: {
        HOME: await f.tempDir(),
        TMPDIR: await f.tempDir(),
        PATH: `${join(prefix, 'node_modules', '.bin')}:${process.env.PATH}`,
        ...agentProfile(name, model.url).workerEnv,
        ...SETTINGS[name].env,
        AGENT_SANDBOX: 'bubblewrap',
        AGENT_SANDBOX_READ: prefix,
        AGENT_WORKSPACES: workspaces,
        AGENT_PERMISSION_POLICY: 'allow-once',
        AGENT_WARM_SPARES: '0',
        AGENT_INIT_TIMEOUT_MS: '120000',
      },
    });
    expect(worker.logs.find((l) => l.msg === 'agents run isolated')?.isolation).toMatch(/^bubblewrap /);

    const proof = `proof-${randomUUID()}`;
    // No $(…): gemini-cli refuses a command with a substitution before running it.
    const command = [
      `echo ${proof} > proof.txt`,
      'echo cwd=$PWD',
      'echo home=$HOME',
      `test -e /proc/${worker.pid} && echo worker-visible || echo worker-hidden`,
      'touch /home/agent/probe 2>/dev/null && echo home-writable || echo home-readonly',
      'grep NSpid /proc/self/status',
    ].join('; ');
    await f.send(THREAD, message(`RUN-SHELL: ${command}`));
    const reply = await waitFor(() => f.replies(THREAD)[0]?.message.text, {
      what: `${name}'s reply`,
      timeoutMs: 180_000,
    }).catch((error: Error) => {
      throw new Error(
        `${error.message}; the model saw: ${JSON.stringify(model.requests.map((r) => r.answer))}`,
      );
    });

    // The model asked for the command, then got its output back and answered with it, in the chat.
    const run = model.requests.filter((r) => r.userTexts.some((t) => t.includes(proof)));
    expect(run.map((r) => r.answer)).toContain(`tool: ${command}`);
    const result = run.find((r) => r.toolResult !== undefined)?.toolResult;
    expect(result, JSON.stringify(run.map((r) => r.answer))).toBeDefined();
    expect(reply).toContain(`TOOL-RESULT: ${result!.trim()}`);
    // It ran in the sandbox: in the thread's workspace and agent home as the sandbox mounts them, and
    // without sight of the worker's process.
    // Gemini CLI puts its `Output: ` before the first line.
    expect(result).toMatch(/(?:^|\s)cwd=\/workspace$/m);
    expect(result).toContain('home=/home/agent');
    expect(result).toContain('worker-hidden');
    expect(result).not.toContain('worker-visible');
    expect(result).toContain(SETTINGS[name].home);
    // NSpid lists the command's PID in each namespace from our sandbox's /proc inwards.
    const nspid = /NSpid:((?:[ \t]+\d+)+)/.exec(result!)?.[1]?.trim().split(/\s+/);
    expect(nspid, result).toHaveLength(SETTINGS[name].pidNamespaces);
    // Its file is in the thread's workspace on the host.
    const file = join(workspaces, 'gateway', 'C1', 'T1', 'workspace', 'proof.txt');
    expect((await readFile(file, 'utf8')).trim()).toBe(proof);
    // What the agent asked before running it was granted once, as the policy says.
    const asked = worker.logs.filter((l) => l.msg === 'permission request answered');
    expect(asked).toHaveLength(SETTINGS[name].permissionRequests);
    for (const request of asked) {
      expect(request).toMatchObject({
        toolKind: 'execute',
        policy: 'allow-once',
        outcome: { outcome: 'selected' },
      });
    }
  });
});
