// The agent host over a real Unix socket, with the real built-in agent: agents start only under a
// warden's lease, and a lease that stops pulsing or is revoked ends every agent and the tools it left
// running in sessions of their own.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@tributary/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeFrame, FRAME, type Frame, FrameReader } from '../src/host/frames.js';
import { HostLease } from '../src/host/host-lease.js';
import {
  AgentHost,
  AgentProcess,
  AgentStartError,
  localLauncher,
  noSandbox,
  remoteLauncher,
  type TurnEvent,
} from '../src/index.js';
import { stillRunning } from '../src/process-tree.js';
import { builtInAgent, tempDir } from './support.js';

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function startHost(): Promise<string> {
  const socketPath = join(await tempDir(), 'agent-host.sock');
  const host = new AgentHost({ socketPath, sandbox: noSandbox, launcher: localLauncher() });
  await host.listen();
  cleanup.push(() => host.close());
  return socketPath;
}

function holdLease(socketPath: string, toleranceMs = 1000): { lease: HostLease; stop: () => void } {
  const lease = new HostLease(socketPath, toleranceMs, () => {});
  const pulse = setInterval(() => lease.pulse(), 100);
  const stop = () => clearInterval(pulse);
  cleanup.push(() => {
    stop();
    lease.close();
  });
  return { lease, stop };
}

async function startAgent(
  socketPath: string,
  ticket: string | undefined,
  updates: TurnEvent[] = [],
): Promise<AgentProcess> {
  const stateDir = await tempDir();
  const agent = await AgentProcess.start({
    ...builtInAgent({ stateDir }),
    cwd: stateDir,
    launcher: remoteLauncher(socketPath, () => ticket),
    onSessionUpdate: (_session, event) => void updates.push(event),
  });
  cleanup.push(() => agent.kill({ now: true }));
  return agent;
}

/** The pid of the detached tool the built-in agent reported starting. */
function toolPid(updates: TurnEvent[]): number {
  for (const event of updates) {
    if (event.kind !== 'agent_thought_chunk' || event.content.type !== 'text') continue;
    const match = /detached child pid (\d+)/.exec(event.content.text);
    if (match) return Number(match[1]);
  }
  throw new Error('no detached child reported');
}

/** One spawn frame on a connection of its own; the frames the host answers until it closes. */
function speak(socketPath: string, spawn: object): Promise<Frame[]> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    const reader = new FrameReader();
    const frames: Frame[] = [];
    socket.on('connect', () => socket.write(encodeFrame(FRAME.spawn, spawn)));
    socket.on('data', (chunk: Buffer) => frames.push(...reader.push(chunk)));
    socket.on('error', reject);
    socket.on('close', () => resolve(frames));
  });
}

describe('the agent host', { timeout: 60_000 }, () => {
  it('starts no agent while no warden holds its lease', async () => {
    const socketPath = await startHost();
    const guessed = randomBytes(32).toString('base64url');
    await expect(startAgent(socketPath, guessed)).rejects.toThrow(AgentStartError);
    await expect(startAgent(socketPath, guessed)).rejects.toThrow(/no worker holds this agent host’s lease/);
    await expect(startAgent(socketPath, undefined)).rejects.toThrow(/holds no lease on the agent host/);
  });

  it('takes no lease for a warden that closed while it waited to reconnect', async () => {
    const socketPath = join(await tempDir(), 'agent-host.sock');
    // No host yet: the lease's first connection fails and it waits to try again; the warden stops.
    const lease = new HostLease(socketPath, 1000, () => {});
    await new Promise((resolve) => setTimeout(resolve, 100));
    lease.close();
    const host = new AgentHost({ socketPath, sandbox: noSandbox, launcher: localLauncher() });
    await host.listen();
    cleanup.push(() => host.close());
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(lease.ticket).toBeUndefined();
    await expect(startAgent(socketPath, randomBytes(32).toString('base64url'))).rejects.toThrow(
      /no worker holds this agent host’s lease/,
    );
  });

  it('refuses a spawn that carries no live lease’s ticket, as an agent that found the socket would send', async () => {
    const socketPath = await startHost();
    const { lease } = holdLease(socketPath);
    await lease.ready;
    const marker = join(await tempDir(), 'started');
    for (const ticket of [undefined, '', randomBytes(32).toString('base64url'), lease.ticket!.slice(0, 20)]) {
      const frames = await speak(socketPath, {
        command: '/bin/sh',
        args: ['-c', `touch ${marker}`],
        env: { PATH: process.env.PATH! },
        room: { workspace: tmpdir(), home: tmpdir() },
        ...(ticket === undefined ? {} : { ticket }),
      });
      expect(frames.map((f) => f.kind)).toEqual([FRAME.failed]);
      expect(frames[0]!.payload.toString()).toMatch(/carries no live lease’s ticket/);
    }
    expect(existsSync(marker)).toBe(false);
    // The worker's own ticket still starts its agents.
    const agent = await startAgent(socketPath, lease.ticket);
    expect(agent.alive).toBe(true);
  });

  it('keeps one lease per worker: a worker that goes takes only its own agents with it', async () => {
    const socketPath = await startHost();
    const first = holdLease(socketPath);
    const second = holdLease(socketPath);
    await Promise.all([first.lease.ready, second.lease.ready]);
    expect(first.lease.ticket).not.toEqual(second.lease.ticket);
    const mine = await startAgent(socketPath, first.lease.ticket);
    const theirs = await startAgent(socketPath, second.lease.ticket);

    first.stop();
    await waitFor(() => !mine.alive, { what: 'the stalled worker’s agent to exit', timeoutMs: 5000 });
    expect(theirs.alive).toBe(true);
    const { sessionId } = await theirs.openNewSession(await tempDir());
    expect((await theirs.prompt(sessionId, [{ type: 'text', text: 'still here' }])).stopReason).toBe(
      'end_turn',
    );
  });

  it('runs a whole turn over the socket under a lease', async () => {
    const socketPath = await startHost();
    const { lease } = holdLease(socketPath);
    await lease.ready;
    const updates: TurnEvent[] = [];
    const agent = await startAgent(socketPath, lease.ticket, updates);
    expect(agent.info.agentInfo?.name).toBe('tributary-agent');
    const { sessionId } = await agent.openNewSession(await tempDir());
    const { stopReason } = await agent.prompt(sessionId, [{ type: 'text', text: 'hello over a socket' }]);
    expect(stopReason).toBe('end_turn');
    const reply = updates
      .flatMap((e) => (e.kind === 'agent_message_chunk' && e.content.type === 'text' ? [e.content.text] : []))
      .join('');
    expect(reply).toContain('hello over a socket');
    // The host measures the agent where it runs: what a warm spare costs its container.
    const [first, second] = await Promise.all([agent.memory(), agent.memory()]);
    expect(first).toBeGreaterThan(1024 * 1024);
    expect(second).toBeGreaterThan(1024 * 1024);
    await agent.kill();
    expect(agent.alive).toBe(false);
    expect(await agent.memory()).toBeUndefined();
  });

  it.each([
    ['stops pulsing', (held: ReturnType<typeof holdLease>) => held.stop()],
    ['revokes it', (held: ReturnType<typeof holdLease>) => void held.lease.revoke()],
    ['drops its connection', (held: ReturnType<typeof holdLease>) => held.lease.close()],
  ])(
    'kills every agent, and the tools they left in sessions of their own, when the warden %s',
    async (_, end) => {
      const socketPath = await startHost();
      const held = holdLease(socketPath);
      await held.lease.ready;
      const updates: TurnEvent[] = [];
      const agent = await startAgent(socketPath, held.lease.ticket, updates);
      const { sessionId } = await agent.openNewSession(await tempDir());
      await agent.prompt(sessionId, [{ type: 'text', text: '@agent {"spawnDetached": true}' }]);
      const tool = toolPid(updates);
      expect(stillRunning([tool])).toEqual([tool]);

      end(held);
      await waitFor(() => !agent.alive, { what: 'the agent to exit', timeoutMs: 5000 });
      await waitFor(() => stillRunning([tool]).length === 0, {
        what: 'its detached tool to be gone',
        timeoutMs: 5000,
      });
      // And none starts again until a warden holds the lease.
      const ticket = held.lease.ticket ?? randomBytes(32).toString('base64url');
      held.lease.close();
      await expect(startAgent(socketPath, ticket)).rejects.toThrow(/no worker holds/);
    },
  );

  it('kills an agent whose own connection breaks, tools in sessions of their own included', async () => {
    const socketPath = await startHost();
    const { lease } = holdLease(socketPath);
    await lease.ready;
    // The wire as a worker speaks it, so its end can go without a word, as a dying worker's does.
    const socket = connect(socketPath);
    const reader = new FrameReader();
    const frames: Frame[] = [];
    socket.on('data', (chunk: Buffer) => frames.push(...reader.push(chunk)));
    const room = await tempDir();
    const script = 'setsid sleep 300 & echo "tool $!"; sleep 300';
    socket.write(
      encodeFrame(FRAME.spawn, {
        command: '/bin/sh',
        args: ['-c', script],
        env: { PATH: process.env.PATH! },
        room: { workspace: room, home: room },
        ticket: lease.ticket,
      }),
    );
    await waitFor(() => frames.some((f) => f.kind === FRAME.stdout), { what: 'the tool started' });
    const agent = (
      JSON.parse(frames.find((f) => f.kind === FRAME.spawned)!.payload.toString()) as { pid: number }
    ).pid;
    const tool = Number(
      /tool (\d+)/.exec(frames.find((f) => f.kind === FRAME.stdout)!.payload.toString())![1],
    );
    expect(stillRunning([agent, tool])).toEqual([agent, tool]);

    socket.destroy();
    await waitFor(() => stillRunning([agent, tool]).length === 0, {
      what: 'the agent and its tool to be gone',
      timeoutMs: 5000,
    });
  });
});
