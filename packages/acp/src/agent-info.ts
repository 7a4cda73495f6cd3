import type { Implementation, InitializeResponse } from '@agentclientprotocol/sdk';
import type { InitializeResponse as InitializeResponseV2 } from '@agentclientprotocol/sdk/experimental/v2/unstable';
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
  /** The ACP version negotiated with this agent, which every later message speaks. */
  protocolVersion: 1 | 2;
  agentInfo: Implementation | undefined;
  promptCapabilities: { image: boolean; audio: boolean; embeddedContext: boolean };
  supports: { loadSession: boolean; resume: boolean; close: boolean };
  authMethods: AuthMethodInfo[];
  /** Takes prompts into a running turn (steering.ts). */
  steering: boolean;
  /**
   * The capabilities object exactly as the agent sent it (`agentCapabilities` in v1, `capabilities` in
   * v2), for checks of capabilities this summary does not name.
   */
  capabilities: Readonly<Record<string, unknown>>;
}

const authType = (method: object): AuthMethodInfo['type'] =>
  'type' in method && method.type === 'terminal' ? 'terminal' : 'agent';

export function fromV1Initialize(response: InitializeResponse): AgentInfo {
  const capabilities = response.agentCapabilities ?? {};
  const prompt = capabilities.promptCapabilities ?? {};
  const session = capabilities.sessionCapabilities ?? {};
  return {
    protocolVersion: 1,
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
      type: authType(method),
    })),
    steering: advertisesSteering(response),
    capabilities,
  };
}

/**
 * v2 folds the session methods into one capability: an agent with sessions at all has resume, close
 * and list, and loads by resuming with a replay.
 */
export function fromV2Initialize(response: InitializeResponseV2): AgentInfo {
  const capabilities = response.capabilities ?? {};
  const session = capabilities.session;
  const prompt = session?.prompt ?? {};
  return {
    protocolVersion: 2,
    agentInfo: { name: response.info.name, version: response.info.version, title: response.info.title },
    promptCapabilities: {
      image: prompt.image != null,
      audio: prompt.audio != null,
      embeddedContext: prompt.embeddedContext != null,
    },
    supports: { loadSession: session != null, resume: session != null, close: session != null },
    authMethods: (response.authMethods ?? []).map((method) => ({
      id: method.methodId,
      name: method.name,
      description: typeof method.description === 'string' ? method.description : undefined,
      type: authType(method),
    })),
    steering: advertisesSteering(response),
    capabilities,
  };
}
