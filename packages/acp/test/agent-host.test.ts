// The agent host over a real Unix socket, with the real built-in agent: agents start only under a
// warden's lease, and a lease that stops pulsing or is revoked ends every agent and the tools it left
// running in sessions of their own.
import { connect } from 'node:net';
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

async function startAgent(socketPath: string, updates: TurnEvent[] = []): Promise<AgentProcess> {
  const stateDir = await tempDir();
  const agent = await AgentProcess.start({
    ...builtInAgent({ stateDir }),
    cwd: stateDir,
    launcher: remoteLauncher(socketPath),
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

describe('the agent host', { timeout: 60_000 }, () => {
  it('starts no agent while no warden holds its lease', async () => {
    const socketPath = await startHost();
    await expect(startAgent(socketPath)).rejects.toThrow(AgentStartError);
    await expect(startAgent(socketPath)).rejects.toThrow(/no worker holds this agent host’s lease/);
  });

  it('runs a whole turn over the socket under a lease', async () => {
    const socketPath = await startHost();
    const { lease } = holdLease(socketPath);
    await lease.ready;
    const updates: TurnEvent[] = [];
    const agent = await startAgent(socketPath, updates);
    expect(agent.info.agentInfo?.name).toBe('tributary-agent');
    const { sessionId } = await agent.openNewSession(await tempDir());
    const { stopReason } = await agent.prompt(sessionId, [{ type: 'text', text: 'hello over a socket' }]);
    expect(stopReason).toBe('end_turn');
    const reply = updates
      .flatMap((e) => (e.kind === 'agent_message_chunk' && e.content.type === 'text' ? [e.content.text] : []))
      .join('');
    expect(reply).toContain('hello over a socket');
    await agent.kill();
    expect(agent.alive).toBe(false);
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
      const agent = await startAgent(socketPath, updates);
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
      if (held.lease) held.lease.close();
      await expect(startAgent(socketPath)).rejects.toThrow(/no worker holds/);
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
