import type { Implementation, InitializeResponse } from '@agentclientprotocol/sdk';
import { advertisesSteering } from './steering.js';

/** One way the agent offers to be signed in (`authMethods` of `initialize`). */
export interface AuthMethodInfo {
  id: string;
  name: string;
  description: string | undefined;
  /** `agent`: the client calls `authenticate`; `terminal`: the user runs the agent interactively. */
  type: 'agent' | 'terminal';
}

/** What the agent answered to `initialize` that the broker uses, absent capabilities made explicit. */
export interface AgentInfo {
  protocolVersion: number;
  agentInfo: Implementation | undefined;
  promptCapabilities: { image: boolean; audio: boolean; embeddedContext: boolean };
  supports: { loadSession: boolean; resume: boolean; close: boolean };
  authMethods: AuthMethodInfo[];
  /** Takes prompts into a running turn (steering.ts). */
  steering: boolean;
}

export function toAgentInfo(response: InitializeResponse): AgentInfo {
  const capabilities = response.agentCapabilities ?? {};
  const prompt = capabilities.promptCapabilities ?? {};
  const session = capabilities.sessionCapabilities ?? {};
  return {
    protocolVersion: response.protocolVersion,
    agentInfo: response.agentInfo ?? undefined,
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
    authMethods: (response.authMethods ?? []).map((method) => ({
      id: method.id,
      name: method.name,
      description: method.description ?? undefined,
      type: 'type' in method && method.type === 'terminal' ? 'terminal' : 'agent',
    })),
    steering: advertisesSteering(response),
  };
}
