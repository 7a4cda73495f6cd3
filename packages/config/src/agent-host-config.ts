import { resolve } from 'node:path';
import { DEFAULT_AGENT_HOST_SOCKET, readWorkspaceSettings } from './agent-settings.js';
import { ConfigError } from './config-error.js';
import { type Env, type LogLevel, readLogLevel, readString } from './env-readers.js';

/** `tributary agent-host`: where it listens, and the sandbox its agents run in there. */
export interface AgentHostConfig {
  logLevel: LogLevel;
  agentHostSocket: string;
  agentSandbox: 'bubblewrap' | 'off';
  agentSandboxRead: readonly string[];
}

export function loadAgentHostConfig(env: Env, cwd: string = process.cwd()): Readonly<AgentHostConfig> {
  const { agentSandbox, agentSandboxRead } = readWorkspaceSettings(env, cwd);
  if (agentSandbox === 'agent-host') {
    throw new ConfigError('AGENT_SANDBOX', 'an agent host runs its agents itself: bubblewrap or off');
  }
  return Object.freeze({
    logLevel: readLogLevel(env),
    agentHostSocket: resolve(cwd, readString(env, 'AGENT_HOST_SOCKET', DEFAULT_AGENT_HOST_SOCKET)),
    agentSandbox,
    agentSandboxRead,
  });
}
