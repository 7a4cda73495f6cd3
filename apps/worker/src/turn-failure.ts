import { AgentAuthError, AgentStartError } from '@tributary/acp';
import { authFix } from './agent-setup.js';

/** What a failed turn means for its batch and what its users are told if the batch is set aside. */
export interface TurnFailure {
  reason: string;
  /** Retrying cannot help: set the batch aside at once. */
  final: boolean;
  notice: string;
}

const LATER = 'Later messages will still be answered once it is fixed; an operator can re-drive these ones.';

function brief(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/**
 * Classifies why the agent could not answer a batch. An agent that wants authentication will not
 * change its mind on a retry; one that could not start may (a crash at start-up), so it is retried
 * like any other failure before its batch is set aside.
 */
export function describeTurnFailure(error: unknown): TurnFailure {
  if (error instanceof AgentAuthError) {
    const fix = authFix(error);
    return {
      reason: `${error.message}; fix: ${fix}`,
      final: true,
      notice: `The agent needs to be signed in before it can answer (${brief(error.message)}). An operator must ${fix}. ${LATER}`,
    };
  }
  const reason = error instanceof Error ? error.message : String(error);
  if (error instanceof AgentStartError) {
    return {
      reason,
      final: false,
      notice: `The agent could not be started (${brief(reason)}), so these messages were set aside. An operator must check AGENT_COMMAND and the agent's setup. ${LATER}`,
    };
  }
  return {
    reason,
    final: false,
    notice: `The agent could not answer these messages (${brief(reason)}), so they were set aside. Resend them if they still matter; ${LATER.charAt(0).toLowerCase()}${LATER.slice(1)}`,
  };
}
