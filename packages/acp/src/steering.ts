import type { ContentBlock } from '@agentclientprotocol/sdk';

/**
 * Steering on the v1 wire (docs/adr/0040): claude-agent-acp and codex-acp serve a prompt sent into a
 * running turn as the extension request `_session/steering` and advertise it with
 * `_meta.steering.supported` in their `initialize` answer. Standard ACP has no such method yet (the
 * drafts, a `session.steering` capability and `session/inject`, change only this module).
 */
export const STEER_METHOD = '_session/steering';

/** Why a steer did not join the running turn; the steered messages then wait for the next turn. */
export type SteerRefusal =
  /** The agent's turn had ended (or was ending) when the steer reached it. */
  | 'turn_ended'
  /** The agent does not advertise steering. */
  | 'unsupported'
  /** The agent answered the steer with an error or an outcome other than `injected`. */
  | 'failed';

export type SteerOutcome = { kind: 'injected' } | { kind: 'refused'; reason: SteerRefusal };

/** Whether the agent's `initialize` answer (of either version) says it takes prompts into a running turn. */
export function advertisesSteering(response: { _meta?: unknown }): boolean {
  const steering = (response._meta as { steering?: { supported?: unknown } } | null | undefined)?.steering;
  return steering?.supported === true;
}

/** The part of a connection an extension request needs; both versions' SDK connections have it. */
export interface ExtensionRequests {
  request<T>(method: string, params: unknown): Promise<T>;
}

interface SteerResponse {
  outcome?: unknown;
}

/**
 * Sends one steer. `idleBehavior: promptRequired` makes an agent that finds no running turn refuse it
 * rather than start a turn of its own, whose reply no prompt of ours would carry.
 */
export async function sendSteer(
  agent: ExtensionRequests,
  sessionId: string,
  prompt: ContentBlock[],
): Promise<SteerOutcome> {
  const response = await agent.request<SteerResponse>(STEER_METHOD, {
    sessionId,
    prompt,
    _meta: { steering: { idleBehavior: 'promptRequired' } },
  });
  switch (response?.outcome) {
    case 'injected':
      return { kind: 'injected' };
    case 'promptRequired':
      return { kind: 'refused', reason: 'turn_ended' };
    default:
      return { kind: 'refused', reason: 'failed' };
  }
}
