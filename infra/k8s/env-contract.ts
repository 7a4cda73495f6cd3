// The environment contract the deployment files (docker-compose.yml, infra/k8s) are checked against.
// Shared by test/infra/compose.test.ts and test/infra/k8s-manifests.test.ts so both read one list.
import {
  FORWARDER_REQUIRED,
  loadAgentHostConfig,
  loadForwarderConfig,
  loadIngressConfig,
  loadPlatformConfig,
  loadWorkerConfig,
  variablesRead,
} from '@tributary/config';

/** DESIGN §10: every variable a user may set; the deployments must wire each one that applies. */
export const DESIGN_ENV = [
  'REDIS_URL',
  'PORT',
  'METRICS_PORT',
  'AGENT_COMMAND',
  'AGENT_WORKSPACES',
  'AGENT_SANDBOX',
  'SLACK_SIGNING_SECRET',
  'SLACK_BOT_TOKEN',
  'SLACK_API_URL',
  'TELEGRAM_SECRET_TOKEN',
  'TELEGRAM_BOT_TOKEN',
  'TELEGRAM_API_URL',
  'DISCORD_PUBLIC_KEY',
  'DISCORD_BOT_TOKEN',
  'DISCORD_API_URL',
  'DISCORD_FORWARDER_SECRET',
  'GATEWAY_SECRET',
  'GATEWAY_REPLY_URL',
  'MESSAGE_PROCESSING_MODE',
  'MAX_BATCH_MESSAGES',
  'MAX_BATCH_TOKENS',
  'ADMIN_TOKEN',
] as const;

/**
 * Every platform variable, from the platform loader itself: ingress and workers share them, so each
 * deployment passes all of them to both (a missing SLACK_BOT_USER_ID once silenced every mention).
 */
export const PLATFORM_ENV = [...variablesRead(loadPlatformConfig)].sort();

/**
 * The variables that are credentials: never committed with a value, kept in a Secret. REDIS_URL is one
 * because it carries the Redis password; METRICS_TOKEN is the scrape's bearer token.
 */
export const SECRET_ENV = [
  'REDIS_URL',
  'SLACK_SIGNING_SECRET',
  'SLACK_BOT_TOKEN',
  'TELEGRAM_SECRET_TOKEN',
  'TELEGRAM_BOT_TOKEN',
  'DISCORD_PUBLIC_KEY',
  'DISCORD_BOT_TOKEN',
  'DISCORD_FORWARDER_SECRET',
  'GATEWAY_SECRET',
  'ADMIN_TOKEN',
  'METRICS_TOKEN',
] as const;

/**
 * The real agents' API keys (docs/agents.md): set in the worker's environment from a Secret (Kubernetes)
 * or .env (compose), never committed with a value, and handed to the agent only through AGENT_ENV, with
 * each start the worker asks of the agent host (which adds nothing of its own environment to an agent's).
 * No Tributary loader reads them.
 */
export const AGENT_CREDENTIAL_ENV = [
  'ANTHROPIC_API_KEY',
  'OPENAI_API_KEY',
  'CODEX_API_KEY',
  'GEMINI_API_KEY',
] as const;

/**
 * Variables the deployment files set that no Tributary loader reads: HOME, the agent's home directory,
 * moved onto a writable volume under a read-only root filesystem; REDIS_PASSWORD, which the dev
 * cluster's Redis component expands into REDIS_URL; AGENTS_SANDBOX, which compose expands into the
 * agents service's AGENT_SANDBOX.
 */
export const DEPLOYMENT_ENV = ['HOME', 'REDIS_PASSWORD', 'AGENTS_SANDBOX'] as const;

/** Defaults the manifests rely on when they leave a variable at its default. */
export const DEFAULTS = {
  PORT: 8080,
  ADMIN_PORT: 8081,
  METRICS_PORT: 9464,
  SHUTDOWN_GRACE_MS: 30_000,
  CANCEL_TIMEOUT_MS: 5_000,
  WORKER_CONCURRENCY: 4,
} as const;

/** What each process reads, from its configuration loader itself. */
export const READS = {
  ingress: variablesRead(loadIngressConfig),
  worker: variablesRead((env) => loadWorkerConfig(env)),
  forwarder: variablesRead(loadForwarderConfig, FORWARDER_REQUIRED),
  agentHost: variablesRead((env) => loadAgentHostConfig(env)),
};

/**
 * What the agents' container (`tributary agent-host`, docs/adr/0045) may be given: its own settings and
 * the deployment's HOME. No credential: it holds none of the worker's, and an agent's key reaches the
 * agent with each start, from the worker.
 */
export function agentHostEnvNames(): Set<string> {
  return new Set([...READS.agentHost, 'HOME']);
}

/** Every name a deployment file may set for a Tributary process. */
export function knownEnvNames(): Set<string> {
  return new Set([
    ...DEPLOYMENT_ENV,
    ...AGENT_CREDENTIAL_ENV,
    ...READS.ingress,
    ...READS.worker,
    ...READS.forwarder,
    ...READS.agentHost,
  ]);
}
