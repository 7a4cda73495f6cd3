import { AgentAuthError, AgentExitedError, AgentRequestError, AgentStartError } from '@tributary/acp';
import { authFix } from '../agents/agent-setup.js';

/** What a failed turn means for its batch and what its users are told if the batch is set aside. */
export interface TurnFailure {
  /** For the operator: the log and the dead letter's record (scrubbed on its way out: turn-output.ts). */
  reason: string;
  /** Retrying cannot help: set the batch aside at once. */
  final: boolean;
  /** The failure may come from one message's content: a batch that keeps failing is split (ADR 0033). */
  splits: boolean;
  /** For everyone in the thread: the cause and what to do, from a fixed catalogue, never the error's text. */
  notice: string;
}

const LATER = 'Later messages will still be answered once it is fixed; an operator can re-drive these ones.';
const RESEND =
  'Resend them if they still matter; later messages will still be answered once it is fixed, and an operator can re-drive these ones.';
const IN_THE_LOG = "The worker's log says what went wrong.";

/**
 * Classifies why the agent could not answer a batch. An agent that wants authentication will not
 * change its mind on a retry; one that could not start may (a crash at start-up), so it is retried
 * like any other failure before its batch is set aside. What an agent printed or answered reaches the
 * thread never: a failing coding agent tends to print keys, paths and stacks.
 */
export function describeTurnFailure(error: unknown): TurnFailure {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof AgentAuthError) {
    const fix = authFix(error);
    return {
      reason: `${message}; fix: ${fix}`,
      final: true,
      // Every message would meet it: one notice for the batch, not one per message.
      splits: false,
      notice: `The agent needs to be signed in before it can answer. An operator must ${fix}. ${LATER}`,
    };
  }
  return { reason: message, final: false, splits: true, notice: noticeFor(error) };
}

/**
 * Whether a turn failed because its agent did not start (spawn, a crash or kill before `initialize`
 * was answered, no answer in time): the fleet's fault, not the messages', so their batch waits for an
 * agent instead of counting the failure (an agent that answers with a protocol version we do not
 * speak did start, and will not change its mind).
 */
export function agentDidNotStart(error: unknown): error is AgentStartError {
  return error instanceof AgentStartError;
}

/** What the thread is told, once, when its messages have waited a while for an agent that does not start. */
export const SLOW_START_NOTICE =
  '⏳ The agent is taking longer than usual to start, so these messages are waiting. They are kept and will be answered as soon as it is running; there is no need to resend them.';

function noticeFor(error: unknown): string {
  if (error instanceof AgentExitedError) {
    return `The agent stopped unexpectedly while answering these messages, so they were set aside. ${IN_THE_LOG} ${RESEND}`;
  }
  if (error instanceof AgentRequestError) {
    return `The agent reported an error while answering these messages, so they were set aside. ${IN_THE_LOG} ${RESEND}`;
  }
  return `The agent could not answer these messages, so they were set aside. ${IN_THE_LOG} ${RESEND}`;
}
