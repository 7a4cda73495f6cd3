// How each published agent is pointed at the fake model API (fake-model-server.ts): the worker
// variables that start it, sign it in and hand it its key and endpoint, as docs/agents.md gives them.

export type AgentName = 'claude' | 'codex' | 'gemini';
export const AGENT_NAMES: readonly AgentName[] = ['claude', 'codex', 'gemini'];

export interface AgentProfile {
  name: AgentName;
  /** The worker's AGENT_COMMAND, AGENT_AUTH_METHOD and AGENT_ENV, and the variables AGENT_ENV names. */
  workerEnv: Record<string, string>;
}

const KEY = 'sk-fake-measurement-key';

/** codex's `-c` overrides for a custom endpoint: a `model_providers` entry speaking Responses. */
export function codexProvider(modelUrl: string): string {
  const entry = `{name="fake",base_url="${modelUrl}/v1",wire_api="responses",env_key="OPENAI_API_KEY"}`;
  return `-c model_provider=fake -c 'model_providers.fake=${entry}'`;
}

export function agentProfile(name: AgentName, modelUrl: string): AgentProfile {
  switch (name) {
    case 'claude':
      return {
        name,
        workerEnv: {
          AGENT_COMMAND: 'claude-agent-acp',
          AGENT_ENV: 'ANTHROPIC_API_KEY,ANTHROPIC_BASE_URL',
          ANTHROPIC_API_KEY: KEY,
          ANTHROPIC_BASE_URL: modelUrl,
        },
      };
    case 'codex':
      return {
        name,
        workerEnv: {
          AGENT_COMMAND: `codex-acp ${codexProvider(modelUrl)}`,
          AGENT_AUTH_METHOD: 'openai-api-key',
          AGENT_ENV: 'OPENAI_API_KEY',
          OPENAI_API_KEY: KEY,
        },
      };
    case 'gemini':
      return {
        name,
        workerEnv: {
          AGENT_COMMAND: 'gemini --acp',
          AGENT_AUTH_METHOD: 'gemini-api-key',
          AGENT_ENV: 'GEMINI_API_KEY,GOOGLE_GEMINI_BASE_URL',
          GEMINI_API_KEY: KEY,
          GOOGLE_GEMINI_BASE_URL: modelUrl,
        },
      };
  }
}
