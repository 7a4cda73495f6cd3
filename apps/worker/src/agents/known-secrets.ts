import { type AgentCommandConfig, buildAgentEnv, DEFAULT_INHERITED_ENV } from '@tributary/acp';
import type { WorkerConfig } from '@tributary/config';
import { SecretScrubber } from '@tributary/observability';

/**
 * The scrubber of everything a worker's agents say, made once when the worker starts: it blanks each
 * secret value the worker holds (its credentials and ingress's: WorkerConfig.heldSecrets) and each
 * value it hands the agent beyond the harmless allowlist (the variables AGENT_ENV names, those the
 * caller adds, the MCP servers' environment and headers), besides anything shaped like a credential.
 * An agent asked to print its key then posts `[redacted]`.
 */
export function knownSecrets(
  config: Pick<WorkerConfig, 'heldSecrets'>,
  agent: AgentCommandConfig,
): SecretScrubber {
  const handedOver = Object.entries(buildAgentEnv(agent))
    .filter(([name]) => !DEFAULT_INHERITED_ENV.includes(name))
    .map(([, value]) => value);
  const mcp = (agent.mcpServers ?? []).flatMap((server) =>
    'env' in server ? server.env.map((variable) => variable.value) : server.headers.flatMap(headerSecrets),
  );
  return new SecretScrubber([...config.heldSecrets, ...handedOver, ...mcp]);
}

/** A header's value, and the credential alone when it follows a scheme (`Bearer <token>`). */
function headerSecrets({ value }: { value: string }): string[] {
  return [value, value.slice(value.lastIndexOf(' ') + 1)];
}
