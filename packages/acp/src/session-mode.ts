import type { SessionModeState } from '@agentclientprotocol/sdk';
import type { LogSink } from '@tributary/observability';
import type { AgentProcess } from './agent-process.js';
import { AgentRequestError } from './errors.js';

/** What became of the configured mode when a session opened. */
export type ModeOutcome =
  /** session/set_mode switched the session to it. */
  | { kind: 'set'; modeId: string }
  /** The agent reported the session already in it; nothing was sent. */
  | { kind: 'current'; modeId: string }
  /** The agent offers modes, not this one; the session stays in `current`. */
  | { kind: 'not-offered'; modeId: string; offered: string[]; current: string }
  /** The agent offers no modes. */
  | { kind: 'no-modes'; modeId: string }
  /** The agent refused session/set_mode. */
  | { kind: 'refused'; modeId: string; reason: string };

/**
 * Puts a just-opened session in `modeId` when the agent's answer (`modes`) offers it. A mode it does
 * not offer, or a refused session/set_mode, leaves the session as the agent opened it.
 */
export async function applySessionMode(
  agent: AgentProcess,
  sessionId: string,
  modes: SessionModeState | null | undefined,
  modeId: string,
): Promise<ModeOutcome> {
  const offered = modes?.availableModes.map((mode) => mode.id) ?? [];
  if (!modes || offered.length === 0) return { kind: 'no-modes', modeId };
  if (!offered.includes(modeId)) {
    return { kind: 'not-offered', modeId, offered, current: modes.currentModeId };
  }
  if (modes.currentModeId === modeId) return { kind: 'current', modeId };
  try {
    await agent.setSessionMode(sessionId, modeId);
  } catch (error) {
    if (!(error instanceof AgentRequestError)) throw error;
    return { kind: 'refused', modeId, reason: error.agentMessage };
  }
  return { kind: 'set', modeId };
}

/** A just-opened session and the mode it is to be put in. */
export interface ModeRequest {
  agent: AgentProcess;
  threadKey: string;
  sessionId: string;
  modes: SessionModeState | null | undefined;
  modeId: string;
}

/**
 * Puts the session in the configured mode and says what became of it: a mode the agent does not offer
 * or refuses is a warning naming what it offers, an agent with no modes a debug record.
 */
export async function applyConfiguredMode(request: ModeRequest, logger: LogSink): Promise<void> {
  const { agent, threadKey, sessionId, modes, modeId } = request;
  const outcome = await applySessionMode(agent, sessionId, modes, modeId);
  const fields = { threadKey, sessionId, ...outcome };
  switch (outcome.kind) {
    case 'set':
      logger.info(fields, 'session mode set');
      return;
    case 'current':
      logger.debug(fields, 'session already in the configured mode');
      return;
    case 'no-modes':
      logger.debug(fields, 'agent offers no session modes; configured mode not applied');
      return;
    case 'not-offered':
      logger.warn(
        fields,
        `agent does not offer session mode "${modeId}" (it offers ${outcome.offered.join(', ')}); the session stays in "${outcome.current}"`,
      );
      return;
    case 'refused':
      logger.warn(fields, 'agent refused session/set_mode; the session stays in its mode');
      return;
  }
}
