import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import { type LogSink, silentLogger } from '@tributary/observability';
import { AgentStartError } from '../errors.js';
import { agentMemory } from '../process-memory.js';
import { agentProcesses, killAgentTree } from '../process-tree.js';
import { type AgentSandbox, noSandbox } from '../sandbox/agent-sandbox.js';
import { assertCommandExists } from '../sandbox/find-command.js';
import type { AgentExit, AgentLauncher, LaunchedAgent, LaunchLine } from './launched-agent.js';

/** How long an exited agent's stderr is read on for what it wrote last. */
const STDERR_DRAIN_MS = 200;

function spawned(child: ChildProcessWithoutNullStreams, command: string): Promise<number> {
  return new Promise((resolve, reject) => {
    child.once('spawn', () => resolve(child.pid ?? -1));
    child.once('error', (error) => reject(new AgentStartError(command, error.message, { cause: error })));
  });
}

/**
 * An agent that is a child of this process, leading a process group of its own (spawned detached),
 * which is what gets signalled, with the tools it started in sessions of their own (setsid), which a
 * group signal misses: those are read from /proc while the agent runs (process-tree.ts).
 */
class LocalAgent implements LaunchedAgent {
  readonly exit: Promise<AgentExit>;
  /**
   * The agent's tools as the last signal found them while it still ran: once it is gone, its tools that
   * left its process group lead back to it no more, only to their own children.
   */
  #tools: number[] = [];

  constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    readonly pid: number,
    private readonly logger: LogSink,
  ) {
    child.on('error', (error) => logger.warn({ pid, err: error }, 'agent process error'));
    this.exit = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        // Its last words may still be in the stderr pipe (why it would not start): they are waited for
        // briefly, never for a tool that keeps the pipe open after the agent is gone.
        const drained = child.stderr.readableEnded ? Promise.resolve() : once(child.stderr, 'end');
        void Promise.race([drained.catch(() => undefined), delay(STDERR_DRAIN_MS)]).then(() =>
          resolve({ code, signal }),
        );
      }),
    );
  }

  get stdin() {
    return this.child.stdin;
  }

  get stdout() {
    return this.child.stdout;
  }

  get stderr() {
    return this.child.stderr;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  terminate(): void {
    // Read first: once the agent is dead its tools belong to init, and nothing leads to them.
    this.#tools = agentProcesses([this.pid], this.#tools);
    this.#signalGroup('SIGTERM');
    for (const pid of this.#tools) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // Gone meanwhile.
      }
    }
  }

  killAll(): void {
    this.#tools = killAgentTree([this.pid], this.#tools);
  }

  async memory(): Promise<number | undefined> {
    const { pssKb, processes } = await agentMemory(this.pid);
    return processes > 0 ? pssKb * 1024 : undefined;
  }

  /** Never throws: kill paths run from timers and exit handlers that must not fail. */
  #signalGroup(signal: NodeJS.Signals): void {
    try {
      process.kill(-this.pid, signal);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ESRCH') return;
      this.logger.error({ pid: this.pid, signal, err: error }, 'could not signal the agent process group');
    }
  }
}

/** Starts agents as children of this process, each in `sandbox` (default none). */
export function localLauncher(
  sandbox: AgentSandbox = noSandbox,
  logger: LogSink = silentLogger,
): AgentLauncher {
  return {
    async launch({ command, args, env, room }: LaunchLine): Promise<LaunchedAgent> {
      // A sandbox is spawned in the agent's place, and would report a missing agent only in its words.
      if (sandbox.kind !== 'off') assertCommandExists(command, env.PATH);
      const line = sandbox.wrap(command, args, room);
      const child = spawn(line.command, line.args, {
        cwd: line.cwd,
        env: { ...env, ...line.env },
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      const pid = await spawned(child, command);
      return new LocalAgent(child, pid, logger);
    },
  };
}
