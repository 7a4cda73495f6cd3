// The published coding agents, each started by a real worker in its bubblewrap sandbox, run a whole
// turn in which their model (the fake one) has them run a shell command: the command's file lands in
// the thread's workspace on the host, and what it printed shows it ran inside the sandbox. And a
// published agent's thread outlives its worker: two workers sharing nothing on disk but the workspace
// root; after the first is killed, the second finds the first turn's file, and Claude Code's own
// session (kept under the thread's agent home) comes back with the first turn in it.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { waitFor } from '@tributary/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Fleet, type FleetWorker, startFleet } from '../../apps/worker/test/fleet/fleet.js';
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

/** A worker running the published agent `name` in its bubblewrap sandbox, HOME and TMPDIR its own. */
async function publishedWorker(
  f: Fleet,
  name: AgentName,
  workspaces: string,
  env: Record<string, string> = {},
): Promise<FleetWorker> {
  return f.spawn({
    env: {
      HOME: await f.tempDir(),
      TMPDIR: await f.tempDir(),
      PATH: `${join(prefix, 'node_modules', '.bin')}:${process.env.PATH}`,
      ...agentProfile(name, model.url).workerEnv,
      ...env,
      AGENT_SANDBOX: 'bubblewrap',
      AGENT_SANDBOX_READ: prefix,
      AGENT_WORKSPACES: workspaces,
      AGENT_PERMISSION_POLICY: 'allow-once',
      AGENT_WARM_SPARES: '0',
      AGENT_INIT_TIMEOUT_MS: '120000',
    },
  });
}

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
    const worker = await publishedWorker(f, name, workspaces, SETTINGS[name].env);
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

describe('a published agent’s thread on another worker (bubblewrap)', { timeout: 300_000 }, () => {
  it('claude: after a SIGKILL between turns the next turn reads the file on the session it resumes', async () => {
    const f = await startFleet({});
    fleet = f;
    const workspaces = await f.tempDir();
    const workers = [
      await publishedWorker(f, 'claude', workspaces),
      await publishedWorker(f, 'claude', workspaces),
    ];
    const modelSaw = () => JSON.stringify(model.requests.map((r) => r.answer));

    const write = 'RUN-SHELL: echo the plan is ready > plan.txt';
    await f.send(THREAD, message(write));
    await f.waitForReplies(THREAD, 1).catch((error: Error) => {
      throw new Error(`${error.message}; the model saw: ${modelSaw()}`);
    });
    const [turn1] = f.dispatches(THREAD);
    expect(turn1!.log.sessionPath).toBe('new');
    await waitFor(
      async () => (await f.queue.admin.state(THREAD)).status === 'idle' && (await f.outboxEmpty(THREAD)),
      { what: 'turn 1 committed and its reply delivered' },
    );
    // Claude Code appends its transcript on a 100 ms timer, after claude-agent-acp has answered the
    // prompt: a kill inside that window loses the turn's tool result and answer from the session it
    // resumes. The kill waits the window out so the takeover is what this test measures.
    const transcript = join(
      workspaces,
      'gateway/C1/T1/home/.claude/projects/-workspace',
      `${String(turn1!.log.sessionId)}.jsonl`,
    );
    await waitFor(
      async () => (await readFile(transcript, 'utf8').catch(() => '')).includes('"TOOL-RESULT: '),
      {
        what: "turn 1's answer in Claude Code's transcript",
      },
    );
    await turn1!.worker.kill();

    const seenBefore = model.requests.length;
    const read = 'RUN-SHELL: cat plan.txt';
    await f.send(THREAD, message(read));
    await f.waitForReplies(THREAD, 2).catch((error: Error) => {
      throw new Error(`${error.message}; the model saw: ${modelSaw()}`);
    });
    const [, turn2] = f.dispatches(THREAD);
    expect(turn2!.worker).toBe(workers.find((w) => w !== turn1!.worker));
    // claude-agent-acp offers session/resume: the session Claude Code wrote on worker A, read back
    // from the thread's agent home on worker B. No history pasted in as text.
    expect(turn2!.log).toMatchObject({
      sessionPath: 'resumed',
      sessionId: turn1!.log.sessionId,
      historyTurns: 0,
    });
    expect(f.replies(THREAD).at(-1)!.message.text).toContain('the plan is ready');

    // The model calls of turn 2 carry turn 1 as Claude Code recorded it: its prompt, the command's call,
    // its result and the answer, before turn 2's prompt.
    const turn2Requests = model.requests.slice(seenBefore).filter((r) => r.api === 'anthropic');
    const asked = turn2Requests.find((r) => r.answer === 'tool: cat plan.txt');
    expect(asked, modelSaw()).toBeDefined();
    const texts = asked!.userTexts;
    const first = texts.findIndex((t) => t.includes(write));
    expect(first, JSON.stringify(texts)).toBeGreaterThanOrEqual(0);
    expect(first).toBeLessThan(texts.findIndex((t) => t.includes(read)));
    const messages: { role: string; content: unknown }[] = (asked!.body as { messages: [] }).messages;
    const blocks = messages.flatMap((m) =>
      Array.isArray(m.content) ? m.content.map((b) => ({ role: m.role, ...b })) : [],
    );
    const call = blocks.find(
      (b) =>
        b.role === 'assistant' &&
        b.type === 'tool_use' &&
        b.input?.command === 'echo the plan is ready > plan.txt',
    );
    expect(call, JSON.stringify(messages)).toBeDefined();
    expect(blocks.some((b) => b.type === 'tool_result' && b.tool_use_id === call!.id)).toBe(true);
    const answer = blocks.find((b) => b.role === 'assistant' && b.type === 'text');
    expect(answer?.text).toMatch(/^TOOL-RESULT: /);
  });
});
