import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import {
  type ClientContext,
  client,
  type InitializeResponse,
  methods,
  ndJsonStream,
  type SessionNotification,
} from '@agentclientprotocol/sdk';
import { onTestFinished } from 'vitest';
import { builtInAgentCommand } from '../src/index.js';

export interface ConnectedAgent {
  agent: ClientContext;
  initialized: InitializeResponse;
  /** The agent process's id, for tests that read what it did from /proc. */
  pid: number;
  /** Every session/update received, in arrival order. */
  updates: SessionNotification[];
  /** Closes stdin and resolves with the exit code once the agent has gone. */
  stop(): Promise<number | null>;
}

/** The environment that lets `@agent` lines script the agent; without it they are plain text. */
export const SCRIPTING = { TRIBUTARY_AGENT_SCRIPTING: 'on' } as const;

export async function stateDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tributary-agent-test-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Starts the built-in agent with the SDK's client over real stdio and completes initialize. */
export async function connectAgent(env: Record<string, string>): Promise<ConnectedAgent> {
  const { command, args } = builtInAgentCommand();
  const child = spawn(command, args, {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  onTestFinished(() => {
    child.kill('SIGKILL');
  });
  const updates: SessionNotification[] = [];
  const connection = client({ name: 'agent-test' })
    .onNotification(methods.client.session.update, ({ params }) => {
      updates.push(params);
    })
    .connect(
      ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>),
    );
  const initialized = await connection.agent.request(methods.agent.initialize, {
    protocolVersion: 1,
    clientInfo: { name: 'agent-test', version: '0' },
  });
  return {
    agent: connection.agent,
    initialized,
    pid: child.pid!,
    updates,
    stop: () => {
      child.stdin.end();
      return exited;
    },
  };
}

/** The reply text carried by the agent_message_chunk updates among `updates`. */
export const replyText = (updates: readonly SessionNotification[]): string =>
  updates
    .flatMap(({ update }) =>
      update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text'
        ? [update.content.text]
        : [],
    )
    .join('');
