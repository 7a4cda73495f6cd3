// An agent on its own, as a worker starts it (AgentProcess): how long start + initialize, session/new
// and the first prompt take, and whether the process outlives its stdin.
import { type ChildProcessByStdio, spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import { AgentProcess, buildAgentEnv } from '@tributary/acp';
import { agentMemory } from '@tributary/acp/process-memory';
import { builtInAgentCommand } from '@tributary/agent';
import { loadWorkerConfig } from '@tributary/config';
import { waitFor } from '@tributary/testkit';
import { agentCommandConfig } from '@tributary/worker';
import type { AgentProfile } from './agent-profiles.js';
import type { FakeModelServer } from './fake-model-server.js';

export interface StartupSample {
  /** spawn → `initialize` (and `authenticate` where configured) answered. */
  startMs: number;
  sessionNewMs: number;
  /** session/prompt sent → the model API got the request. */
  modelRequestMs: number;
  /** session/prompt sent → the first agent_message_chunk. */
  firstTokenMs: number;
  /** session/prompt sent → its answer. */
  promptMs: number;
  stopReason: string;
  /** PSS of the agent's process group, MB: initialized (a warm spare), and after one turn in a session. */
  sparePssMb: number;
  afterTurnPssMb: number;
}

/** The agent's start options from worker variables, as `tributary doctor` derives them. */
function startOptions(profile: AgentProfile, env: Record<string, string>) {
  const config = loadWorkerConfig({ REDIS_URL: 'redis://127.0.0.1:1', ...profile.workerEnv });
  const agent = agentCommandConfig(config, builtInAgentCommand());
  // The agent's environment as a worker would give it, read from `env` instead of this process's.
  return { ...agent, inheritEnv: [], env: buildAgentEnv(agent, { ...env, ...profile.workerEnv }) };
}

const elapsed = (from: number) => Math.round(performance.now() - from);

export async function startupSample(
  profile: AgentProfile,
  model: FakeModelServer,
  env: Record<string, string>,
  cwd: string,
): Promise<StartupSample> {
  const marker = `startup-${randomUUID()}`;
  let firstChunk: number | undefined;
  const started = performance.now();
  const agent = await AgentProcess.start({
    ...startOptions(profile, env),
    cwd,
    initializeTimeoutMs: 120_000,
    onSessionUpdate: (_sessionId, event) => {
      if (event.kind === 'agent_message_chunk') firstChunk ??= performance.now();
    },
    onPermissionRequest: () => ({ outcome: { outcome: 'cancelled' } }),
  });
  try {
    const startMs = elapsed(started);
    const spare = await agentMemory(agent.pid);
    const opening = performance.now();
    const session = await agent.openNewSession(cwd);
    const sessionNewMs = elapsed(opening);
    const sentAt = Date.now();
    const sent = performance.now();
    const answer = await agent.prompt(session.sessionId, [{ type: 'text', text: `say hi (${marker})` }]);
    const promptMs = elapsed(sent);
    const request = model.requests.find((r) => r.userTexts.some((text) => text.includes(marker)));
    return {
      startMs,
      sessionNewMs,
      modelRequestMs: request ? request.at - sentAt : Number.NaN,
      firstTokenMs: firstChunk === undefined ? Number.NaN : Math.round(firstChunk - sent),
      promptMs,
      stopReason: answer.stopReason,
      sparePssMb: Math.round(spare.pssKb / 1024),
      afterTurnPssMb: Math.round((await agentMemory(agent.pid)).pssKb / 1024),
    };
  } finally {
    await agent.kill();
  }
}

export interface StdinEofResult {
  /** Idle (initialized, no session): ms until the agent exited after its stdin closed, or 'running'. */
  idle: number | 'running';
  /** Mid-turn (its model stream running): the same, for the process it was started as. */
  midTurnLeader: number | 'running';
  /** Mid-turn: processes of its group still alive `waitMs` after stdin closed. */
  midTurnGroupAlive: string[];
  /** Mid-turn: ms from stdin closing until the model stream ended, or 'streaming'. */
  midTurnStreamEnded: number | 'streaming';
}

/**
 * Starts the agent bare (no AgentProcess, no warden) and closes its stdin, as a dead worker's pipe
 * closes: once idle after `initialize`, once while a prompt's model stream runs (the fake model's
 * SLOW answer). Whatever still runs `waitMs` later is killed.
 */
export async function stdinEof(
  profile: AgentProfile,
  model: FakeModelServer,
  env: Record<string, string>,
  cwd: string,
  waitMs: number,
): Promise<StdinEofResult> {
  const idle = await closeStdin(profile, model, env, cwd, waitMs, false);
  const midTurn = await closeStdin(profile, model, env, cwd, waitMs, true);
  return {
    idle: idle.leader,
    midTurnLeader: midTurn.leader,
    midTurnGroupAlive: midTurn.groupAlive,
    midTurnStreamEnded: midTurn.streamEnded,
  };
}

async function closeStdin(
  profile: AgentProfile,
  model: FakeModelServer,
  env: Record<string, string>,
  cwd: string,
  waitMs: number,
  midTurn: boolean,
) {
  const options = startOptions(profile, env);
  const child = spawn(options.command, options.args ?? [], {
    cwd,
    env: options.env,
    detached: true,
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  const rpc = jsonRpc(child);
  await rpc.call('initialize', { protocolVersion: 1, clientCapabilities: {} });
  let tag = '';
  if (midTurn) {
    if (options.authMethod) await rpc.call('authenticate', { methodId: options.authMethod });
    const { sessionId } = (await rpc.call('session/new', { cwd, mcpServers: [] })) as { sessionId: string };
    tag = `eof-${randomUUID()}`;
    void rpc.call('session/prompt', { sessionId, prompt: [{ type: 'text', text: `SLOW ${tag}` }] });
    await waitFor(() => model.requests.find((r) => r.streamed && r.userTexts.some((t) => t.includes(tag))), {
      what: `${profile.name}'s model request`,
      timeoutMs: 120_000,
    });
  }
  const closed = performance.now();
  const closedAt = Date.now();
  child.stdin.end();
  const exited = once(child, 'exit').then(() => elapsed(closed));
  const leader = await Promise.race([
    exited,
    new Promise<'running'>((resolve) => setTimeout(resolve, waitMs, 'running')),
  ]);
  if (leader !== 'running') await new Promise((resolve) => setTimeout(resolve, waitMs - leader));
  const groupAlive = groupMembers(child.pid!);
  const stream = model.requests.find(
    (r) => r.streamed && tag !== '' && r.userTexts.some((t) => t.includes(tag)),
  );
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // The group is gone already.
  }
  await exited;
  return {
    leader,
    groupAlive,
    streamEnded: stream?.endedAt === undefined ? ('streaming' as const) : stream.endedAt - closedAt,
  };
}

/** Requests over an agent's stdio, answered by id; requests from the agent are left unanswered. */
function jsonRpc(child: ChildProcessByStdio<Writable, Readable, null>) {
  let next = 1;
  let pending = '';
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  child.stdout.on('data', (chunk: Buffer) => {
    const lines = (pending + chunk.toString()).split('\n');
    pending = lines.pop()!;
    for (const line of lines) {
      const message = JSON.parse(line) as { id?: number; result?: unknown; error?: { message: string } };
      const waiter = message.id === undefined ? undefined : waiting.get(message.id);
      if (!waiter || !('result' in message || 'error' in message)) continue;
      waiting.delete(message.id!);
      if (message.error) waiter.reject(new Error(message.error.message));
      else waiter.resolve(message.result);
    }
  });
  return {
    call(method: string, params: unknown): Promise<unknown> {
      const id = next++;
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
    },
  };
}

function groupMembers(pgid: number): string[] {
  const out = spawnSync('ps', ['-o', 'pid=,stat=,args=', '-g', String(pgid)], { encoding: 'utf8' }).stdout;
  return out
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !/^\d+\s+Z/.test(line))
    .map((line) => line.slice(0, 100));
}
