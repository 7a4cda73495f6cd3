import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type AgentFeatures,
  type AgentScript,
  builtInAgentCommand,
  readStoredSessions,
} from '@tributary/agent';
import type { LogSink } from '@tributary/observability';
import { onTestFinished } from 'vitest';
import type {
  AgentCommandConfig,
  ContentBlock,
  LateUpdate,
  SessionPoolOptions,
  TurnEvent,
} from '../src/index.js';
import { SessionPool } from '../src/index.js';

export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tributary-acp-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

export interface AgentSetup {
  stateDir: string;
  /** TRIBUTARY_AGENT_CAPS of the built-in agent. */
  caps?: Partial<AgentFeatures>;
  env?: Record<string, string>;
}

export function builtInAgent({ stateDir, caps, env }: AgentSetup): AgentCommandConfig {
  return {
    ...builtInAgentCommand(),
    env: {
      TRIBUTARY_AGENT_STATE_DIR: stateDir,
      // Tests script the agent with `@agent` lines in their prompts.
      TRIBUTARY_AGENT_SCRIPTING: 'on',
      // The suites run against an ACP v2 agent too: npm run test:acp-v2 sets this.
      ...(process.env.TRIBUTARY_AGENT_ACP_VERSION
        ? { TRIBUTARY_AGENT_ACP_VERSION: process.env.TRIBUTARY_AGENT_ACP_VERSION }
        : {}),
      ...(caps ? { TRIBUTARY_AGENT_CAPS: JSON.stringify(caps) } : {}),
      ...env,
    },
  };
}

export type PoolSetup = Partial<AgentSetup> & Partial<SessionPoolOptions>;

/**
 * A pool on the real built-in agent (unless `agent` names another), closed (process group killed) when
 * the test ends.
 */
export async function startPool(setup: PoolSetup = {}): Promise<{ pool: SessionPool; stateDir: string }> {
  const { stateDir = await tempDir(), caps, env, agent, ...options } = setup;
  const pool = new SessionPool({
    cwd: tmpdir(),
    ...options,
    agent: agent ?? builtInAgent({ stateDir, caps, env }),
  });
  onTestFinished(() => pool.close());
  return { pool, stateDir };
}

/** The built-in agent's persisted sessions: the ground truth of what the agent was asked to do. */
export const storedSessions = readStoredSessions;

export const text = (value: string): ContentBlock => ({ type: 'text', text: value });

/** The text of each agent_message_chunk among `events`, in order. */
export const messageChunks = (events: readonly TurnEvent[]): string[] =>
  events.flatMap((event) =>
    event.kind === 'agent_message_chunk' && event.content.type === 'text' ? [event.content.text] : [],
  );

/** A prompt whose only content is a script line for the built-in agent. */
export const scripted = (script: AgentScript, prompt = 'hello'): ContentBlock[] => [
  text(`${prompt}\n@agent ${JSON.stringify(script)}`),
];

/**
 * Polls `probe` until it returns something other than undefined/false; fails after `timeoutMs`, by
 * default as long as testkit's waitFor gives an agent's start on a loaded machine.
 */
export async function waitFor<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The pid the built-in agent reports after a `spawnGrandchild` script step, once it has. */
export function grandchildPid(events: readonly TurnEvent[], tool = 'grandchild'): number | undefined {
  for (const event of events) {
    const match =
      event.kind === 'agent_thought_chunk' &&
      event.content.type === 'text' &&
      new RegExp(`${tool} pid (\\d+)`).exec(event.content.text);
    if (match) return Number(match[1]);
  }
  return undefined;
}

/** True when the process no longer runs (gone, or a zombie nobody has reaped yet). */
export async function processGone(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

export interface LogRecord {
  level: keyof LogSink;
  fields: Record<string, unknown>;
  message: string;
}

export function recordingLogger(): { logger: LogSink; records: LogRecord[] } {
  const records: LogRecord[] = [];
  const record =
    (level: keyof LogSink) =>
    (fields: object, message: string): void => {
      records.push({ level, fields: fields as Record<string, unknown>, message });
    };
  return {
    records,
    logger: { debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') },
  };
}

/** Runs one turn in a first pool (its own agent process), closes it, and opens a second pool. */
export async function afterRestart(caps?: Partial<AgentFeatures>) {
  const stateDir = await tempDir();
  const first = await startPool({ stateDir, caps });
  const earlier = await first.pool.runTurn('thread-1', [text('remember me')]);
  await first.pool.close();
  const late: LateUpdate[] = [];
  const { pool } = await startPool({ stateDir, caps, onLateUpdate: (update) => late.push(update) });
  return { pool, earlier, late };
}
