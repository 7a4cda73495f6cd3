/**
 * The files one agent process may write: its thread's workspace and its thread's agent home (where
 * coding agents keep their sessions: ~/.claude, ~/.codex, ~/.gemini), host paths. A warm spare has
 * rooms of its own until a thread takes it (agent-rooms.ts).
 */
export interface AgentRoom {
  workspace: string;
  home: string;
}

/** A command line ready to spawn: the agent's, or the sandbox's around it. */
export interface SpawnLine {
  command: string;
  args: string[];
  /** Working directory of the spawned process, on the host. */
  cwd: string;
  /** Variables set over the agent's environment (its HOME and TMPDIR inside a sandbox). */
  env: Record<string, string>;
}

/** How agent processes are isolated from the worker and from each other (docs/adr/0044). */
export interface AgentSandbox {
  /**
   * `bubblewrap`; `agent-host` for agents started by an agent host in a container of their own
   * (host/agent-host.ts), which applies its own sandbox; `off` where the operator turned isolation off.
   */
  readonly kind: 'bubblewrap' | 'agent-host' | 'off';
  /** One line for the start-up log and `tributary doctor`: what the agent can and cannot reach. */
  readonly describe: string;
  /** The command line that runs the agent in `room`. */
  wrap(command: string, args: readonly string[], room: AgentRoom): SpawnLine;
  /** The working directory a session of the thread in `room` is opened in, as its agent sees it. */
  sessionCwd(room: AgentRoom): string;
  /**
   * Whether a room, once a process runs in it, may be moved to another path on the host: true where
   * the process sees it through a mount made at its start, false where it holds the path itself.
   */
  readonly roomsMove: boolean;
}

/**
 * No isolation: the agent runs as the worker, sees what the worker sees, and keeps the HOME it
 * inherited (sessions of coding agents are shared by every thread on the host). Its working
 * directory is still its thread's workspace.
 */
export const noSandbox: AgentSandbox = {
  kind: 'off',
  describe:
    'off (AGENT_SANDBOX=off): agents run as the worker and can read its environment, its files and every thread workspace',
  wrap: (command, args, room) => ({ command, args: [...args], cwd: room.workspace, env: {} }),
  sessionCwd: (room) => room.workspace,
  roomsMove: false,
};

/**
 * No sandbox inside an agent host's own container (restricted Kubernetes), where the container is
 * the isolation from the worker: the agents share it, and each gets the HOME of its room rather than
 * the container's, so the session stores of coding agents lie on the workspace volume and stay with
 * their threads when a thread moves to another pod.
 */
export const containerOnly: AgentSandbox = {
  ...noSandbox,
  describe:
    'off (AGENT_SANDBOX=off): agents share this container and its view of every thread workspace, each with the HOME of its room',
  wrap: (command, args, room) => ({
    command,
    args: [...args],
    cwd: room.workspace,
    env: { HOME: room.home },
  }),
};
