import { type AgentCapabilities, PROTOCOL_VERSION } from '@agentclientprotocol/sdk';

/** What this agent process advertises and serves; `TRIBUTARY_AGENT_CAPS` overrides any field. */
export interface AgentFeatures {
  protocolVersion: number;
  image: boolean;
  audio: boolean;
  embeddedContext: boolean;
  loadSession: boolean;
  resume: boolean;
  close: boolean;
  /** Fault for client tests: answer `initialize` with error -32022 (unsupported protocol version). */
  refuseInitialize: boolean;
  /** Fault for client tests: exit with code 5 when `session/resume` arrives. */
  exitOnResume: boolean;
  /**
   * Like agents that need a login (Codex, Claude Code without credentials): advertise an auth method
   * and refuse sessions with auth_required until a client authenticates.
   */
  requireAuth: boolean;
  /**
   * Like claude-agent-acp after a cancel: the first prompt after a cancelled turn ends at once with
   * `end_turn` and nothing else, and is not recorded in the session's history.
   */
  emptyAfterCancel: boolean;
  /**
   * Like codex-acp and claude-agent-acp: keeps running when its stdin closes (a turn in progress runs
   * on), so only a kill of its process group ends it.
   */
  outliveStdin: boolean;
  /**
   * Session mode ids offered in the answers to session/new, session/load and session/resume (the first
   * is a new session's mode), switched with session/set_mode. Empty: no modes, no set_mode handler.
   */
  modes: string[];
  /**
   * Like claude-agent-acp and codex-acp: advertise steering (`_meta.steering.supported`) and take a
   * `_session/steering` request while a turn runs into that turn (docs/adr/0040).
   */
  steering: boolean;
  /** With `steering`: a hung agent, which takes `_session/steering` and never answers it. */
  steerUnanswered: boolean;
}

const DEFAULT_FEATURES: AgentFeatures = {
  protocolVersion: PROTOCOL_VERSION,
  image: true,
  audio: false,
  embeddedContext: true,
  loadSession: true,
  resume: true,
  close: true,
  refuseInitialize: false,
  exitOnResume: false,
  requireAuth: false,
  emptyAfterCancel: false,
  outliveStdin: false,
  modes: [],
  steering: false,
  steerUnanswered: false,
};

/**
 * `TRIBUTARY_AGENT_CAPS` over the defaults; `protocolVersion` is the version spoken unless the caps
 * name another (`TRIBUTARY_AGENT_ACP_VERSION`: 2 speaks ACP v2, anything else v1 answering that number).
 */
export function parseFeatures(raw: string | undefined, protocolVersion = PROTOCOL_VERSION): AgentFeatures {
  if (!raw) return { ...DEFAULT_FEATURES, protocolVersion };
  const value: unknown = JSON.parse(raw);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error('TRIBUTARY_AGENT_CAPS must be a JSON object');
  }
  const features: AgentFeatures = { ...DEFAULT_FEATURES, protocolVersion };
  for (const [key, field] of Object.entries(value)) {
    if (!Object.hasOwn(DEFAULT_FEATURES, key)) {
      throw new Error(`TRIBUTARY_AGENT_CAPS: unknown field "${key}"`);
    }
    if (key === 'modes') {
      if (!Array.isArray(field) || !field.every((mode) => typeof mode === 'string' && mode !== '')) {
        throw new Error('TRIBUTARY_AGENT_CAPS: "modes" must be a list of mode ids');
      }
      features.modes = [...new Set(field as string[])];
      continue;
    }
    const expected = typeof DEFAULT_FEATURES[key as keyof AgentFeatures];
    if (typeof field !== expected) {
      throw new Error(`TRIBUTARY_AGENT_CAPS: "${key}" must be a ${expected}`);
    }
    Object.assign(features, { [key]: field });
  }
  return features;
}

/** The capabilities answered to `initialize`: exactly the handlers that get registered. */
export function agentCapabilities(features: AgentFeatures): AgentCapabilities {
  return {
    loadSession: features.loadSession,
    promptCapabilities: {
      image: features.image,
      audio: features.audio,
      embeddedContext: features.embeddedContext,
    },
    sessionCapabilities: {
      ...(features.resume ? { resume: {} } : {}),
      ...(features.close ? { close: {} } : {}),
    },
  };
}
