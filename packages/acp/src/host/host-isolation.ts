import { connect } from 'node:net';
import type { AgentSandbox } from '../sandbox/agent-sandbox.js';
import type { HostIsolation } from './agent-host.js';
import { encodeFrame, FRAME, FrameReader, json } from './frames.js';

/** Asks the agent host at `socketPath` what isolation its agents get; rejects when it cannot be reached. */
export function askAgentHost(socketPath: string, timeoutMs = 5000): Promise<HostIsolation> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    const reader = new FrameReader();
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer from the agent host at ${socketPath} within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('connect', () => socket.write(encodeFrame(FRAME.hello)));
    socket.on('data', (chunk: Buffer) => {
      const [frame] = reader.push(chunk);
      if (!frame) return;
      clearTimeout(timer);
      socket.end();
      resolve(json<HostIsolation>(frame));
    });
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`the agent host at ${socketPath} cannot be reached (${error.message})`));
    });
  });
}

/**
 * The isolation of agents an agent host starts, as the worker's session pool needs it: where sessions
 * open and whether a spare's room can become a thread's. The host wraps each agent in its own sandbox.
 */
export function agentHostSandbox(socketPath: string, host: HostIsolation): AgentSandbox {
  return {
    kind: 'agent-host',
    describe: `agent host at ${socketPath}, in a container without the worker's secrets, processes or files; inside it ${host.describe}`,
    wrap: (command, args, room) => ({ command, args: [...args], cwd: room.workspace, env: {} }),
    sessionCwd: (room) => host.workspace ?? room.workspace,
    roomsMove: host.roomsMove,
  };
}
