import type { Readable, Writable } from 'node:stream';
import type { AgentRoom } from '../sandbox/agent-sandbox.js';

export interface AgentExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** An agent to start: its command line, the environment it gets, and the room it may write. */
export interface LaunchLine {
  command: string;
  args: readonly string[];
  env: Record<string, string>;
  room: AgentRoom;
}

/**
 * A started agent process, wherever it runs: a child of this process (local-launcher.ts) or of an agent
 * host in another container (remote-launcher.ts). Whoever started it can end it and everything it
 * started, tools that left its process group included.
 */
export interface LaunchedAgent {
  /** Its pid where it runs: for logs, and for the warden of a local one. */
  readonly pid: number;
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** Resolves once the agent process itself has exited. */
  readonly exit: Promise<AgentExit>;
  readonly running: boolean;
  /** SIGTERM to the agent and to the tools it started, wherever they went. */
  terminate(): void;
  /** SIGKILL to the agent, its tools and whatever they forked; after its exit, to what is left of them. */
  killAll(): void;
  /**
   * The PSS in bytes of the agent and everything it started, read where it runs (what one more such
   * agent costs that machine); undefined once it is gone.
   */
  memory(): Promise<number | undefined>;
}

/** Starts agent processes; rejects with AgentStartError when one cannot be started at all. */
export interface AgentLauncher {
  launch(line: LaunchLine): Promise<LaunchedAgent>;
}
