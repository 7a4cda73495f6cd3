import type {
  AgentCapabilities,
  AuthMethod,
  Implementation,
  InitializeResponse,
} from '@agentclientprotocol/sdk';

/** What the agent answered to `initialize`, with absent optional capabilities made explicit. */
export interface AgentInfo {
  protocolVersion: number;
  agentInfo: Implementation | undefined;
  agentCapabilities: AgentCapabilities;
  promptCapabilities: { image: boolean; audio: boolean; embeddedContext: boolean };
  supports: { loadSession: boolean; resume: boolean; close: boolean };
  authMethods: AuthMethod[];
}

export function toAgentInfo(response: InitializeResponse): AgentInfo {
  const capabilities = response.agentCapabilities ?? {};
  const prompt = capabilities.promptCapabilities ?? {};
  const session = capabilities.sessionCapabilities ?? {};
  return {
    protocolVersion: response.protocolVersion,
    agentInfo: response.agentInfo ?? undefined,
    agentCapabilities: capabilities,
    promptCapabilities: {
      image: prompt.image === true,
      audio: prompt.audio === true,
      embeddedContext: prompt.embeddedContext === true,
    },
    supports: {
      loadSession: capabilities.loadSession === true,
      resume: session.resume != null,
      close: session.close != null,
    },
    authMethods: response.authMethods ?? [],
  };
}
