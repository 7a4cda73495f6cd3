import {
  type AgentAuthError,
  type AgentCommandConfig,
  DEFAULT_INHERITED_ENV,
  type NodeEntryCommand,
} from '@tributary/acp';
import type { WorkerConfig } from '@tributary/config';

type AgentSettings = Pick<WorkerConfig, 'agentCommand' | 'agentEnv' | 'agentAuthMethod' | 'agentMcpServers'>;

/**
 * How a worker starts its agent: AGENT_COMMAND (else `builtIn`, the built-in agent, which whoever
 * starts the worker passes in: a worker imports no other app), an environment of the allowlist plus
 * the variables AGENT_ENV names (plus `env`, which harnesses set), AGENT_AUTH_METHOD, and the MCP
 * servers of AGENT_MCP_SERVERS for its sessions. `tributary doctor` starts it the same way.
 */
export function agentCommandConfig(
  config: Readonly<AgentSettings>,
  builtIn: NodeEntryCommand,
  env: Readonly<Record<string, string>> = {},
): AgentCommandConfig & { args: readonly string[] } {
  const agent = config.agentCommand ?? builtIn;
  return {
    ...agent,
    inheritEnv: [...DEFAULT_INHERITED_ENV, ...config.agentEnv],
    env,
    mcpServers: config.agentMcpServers,
    ...(config.agentAuthMethod === undefined ? {} : { authMethod: config.agentAuthMethod }),
  };
}

/** What an operator must change for an agent that wants authentication, naming the variables. */
export function authFix(error: AgentAuthError): string {
  const usable = error.offered.filter((m) => m.type === 'agent').map((m) => m.id);
  const choices = usable.map((id) => `"${id}"`).join(', ');
  if (error.offered.length === 0) {
    return 'give the agent its credentials (name their variables in AGENT_ENV) or sign it in on the worker host';
  }
  if (usable.length === 0) {
    return 'sign the agent in on the worker host by running it interactively (it offers terminal logins only)';
  }
  if (error.configured === undefined) {
    return usable.length === 1
      ? `set AGENT_AUTH_METHOD=${usable[0]} and pass the credentials it needs through AGENT_ENV`
      : `set AGENT_AUTH_METHOD to one of ${choices} and pass the credentials it needs through AGENT_ENV`;
  }
  if (!usable.includes(error.configured)) {
    const to = usable.length === 1 ? choices : `one of ${choices}`;
    return `set AGENT_AUTH_METHOD to ${to} (the agent does not offer "${error.configured}")`;
  }
  return `check the credentials the "${error.configured}" method needs: set them in the worker's environment and name them in AGENT_ENV`;
}
