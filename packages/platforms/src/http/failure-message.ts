import type { FailureReason } from './answer.js';
import type { Failure, RetryPolicy, Step } from './retry-policy.js';

export interface GiveUp {
  failure: Failure;
  step: Extract<Step, { kind: 'give-up' }>;
  attempts: number;
  waitedMs: number;
  policy: RetryPolicy;
  /** What to check when the platform refuses us, e.g. `check SLACK_BOT_TOKEN and the app's scopes`. */
  authHint: string;
}

const NEXT_FOR_REASON: Record<FailureReason, (authHint: string) => string> = {
  auth: (authHint) => authHint,
  'not-found': () => 'check the channel and message ids, and that the bot is still in the chat',
  refused: () => 'not retried, since the same request would be refused again',
};

/** The error text of a call that will not be retried any more: what happened, then what to do next. */
export function giveUpMessage({ failure, step, attempts, waitedMs, policy, authHint }: GiveUp): string {
  switch (step.because) {
    case 'not-retryable':
      return failure.kind === 'failed'
        ? `${failure.detail}; ${NEXT_FOR_REASON[failure.reason](authHint)}`
        : failure.detail;
    case 'attempts':
      return failure.kind === 'rate-limited'
        ? `${failure.detail}, still after ${attempts} attempts over ${seconds(waitedMs)}; send less often or retry later`
        : `${failure.detail} on all ${attempts} attempts over ${seconds(waitedMs)}; the platform is unavailable, check its status and retry later`;
    case 'budget':
      return (
        `${failure.detail}; the next retry would wait ${seconds(step.neededMs)}, beyond the retry budget of ` +
        `${seconds(policy.maxTotalWaitMs)} (${seconds(waitedMs)} spent); retry later or raise the budget`
      );
  }
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
