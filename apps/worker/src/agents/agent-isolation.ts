import { realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type AgentLauncher,
  type AgentSandbox,
  agentHostSandbox,
  askAgentHost,
  bubblewrapSandbox,
  localLauncher,
  noSandbox,
  probeBubblewrap,
  remoteLauncher,
} from '@tributary/acp';
import { ConfigError, type WorkerConfig } from '@tributary/config';
import type { LogSink } from '@tributary/observability';

type IsolationSettings = Pick<WorkerConfig, 'agentSandbox' | 'agentSandboxRead' | 'agentHostSocket'>;

/** How a worker's agents are isolated, and what starts them so. */
export interface AgentIsolation {
  sandbox: AgentSandbox;
  launcher: AgentLauncher;
}

/**
 * The installation's root: the repository, a compiled copy of it, or /app in the image, which all keep
 * this module at apps/worker/src/agents.
 */
const installRoot = (): string => join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

/**
 * What a sandboxed agent reads besides the system: the broker's code and dependencies (the built-in
 * agent and agents installed as dependencies run from there; nothing else of the installation, where
 * an operator may keep a .env), the Node binary wherever it is installed, and AGENT_SANDBOX_READ.
 */
export function sandboxReadPaths(settings: Pick<WorkerConfig, 'agentSandboxRead'>): string[] {
  const root = installRoot();
  return [
    ...['node_modules', 'apps', 'packages'].map((name) => join(root, name)),
    realpathSync(process.execPath),
    ...settings.agentSandboxRead,
  ];
}

/**
 * The sandbox agents started here run in: bubblewrap, or none where the operator turned it off. Where
 * bubblewrap cannot isolate, a ConfigError naming why and what to do: a worker (or an agent host)
 * refuses to start rather than run agents unisolated unasked.
 */
export async function localSandbox(
  settings: Pick<WorkerConfig, 'agentSandbox' | 'agentSandboxRead'>,
): Promise<AgentSandbox> {
  if (settings.agentSandbox === 'off') return noSandbox;
  const probe = await probeBubblewrap();
  if (!probe.ok) {
    throw new ConfigError(
      'AGENT_SANDBOX',
      `agents cannot be isolated here (${probe.reason}). Install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap) where user namespaces are allowed, run the agents in a container of their own (AGENT_SANDBOX=agent-host), or set AGENT_SANDBOX=off to run them as the worker, able to read its secrets`,
    );
  }
  return bubblewrapSandbox({ readOnly: sandboxReadPaths(settings) }, probe.version);
}

/**
 * The isolation a worker's agents run in (docs/adr/0044, 0045): started here in a sandbox (or none,
 * when turned off), or by the agent host in a container of their own, which must answer now; there
 * each start carries the ticket of the lease `hostTicket` gives (the warden's).
 */
export async function agentIsolation(
  settings: IsolationSettings,
  hostTicket: () => string | undefined,
  logger?: LogSink,
): Promise<AgentIsolation> {
  if (settings.agentSandbox === 'agent-host') {
    const socket = settings.agentHostSocket;
    const host = await askAgentHost(socket).catch((error: Error) => {
      throw new ConfigError(
        'AGENT_HOST_SOCKET',
        `${error.message}: start \`tributary agent-host\` beside the worker with the socket's folder shared, or set AGENT_SANDBOX to bubblewrap or off`,
      );
    });
    return { sandbox: agentHostSandbox(socket, host), launcher: remoteLauncher(socket, hostTicket) };
  }
  const sandbox = await localSandbox(settings);
  return { sandbox, launcher: localLauncher(sandbox, logger) };
}
