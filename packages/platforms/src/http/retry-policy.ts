import type { Verdict } from './answer.js';

/** How long and how often one platform call is retried. */
export interface RetryPolicy {
  /** Attempts in total, the first one included. */
  maxAttempts: number;
  /** The first backoff step; each further step doubles, up to maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Sleep summed over all retries of one call; a wait that would go beyond it fails the call instead. */
  maxTotalWaitMs: number;
  /** Per attempt: no answer within it counts as a network error. */
  timeoutMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 5,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  maxTotalWaitMs: 30_000,
  timeoutMs: 10_000,
};

/** Added on top of a platform's advised wait, so callers told the same Retry-After do not return at once. */
export const RATE_LIMIT_SPREAD_MS = 250;

/**
 * Exponential backoff with "equal jitter": half of each step is fixed and half random, so concurrent
 * retries spread out without any of them coming back immediately. `retry` counts from 1.
 */
export function backoffDelayMs(retry: number, policy: RetryPolicy, random: () => number): number {
  const step = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  return Math.round(step / 2 + random() * (step / 2));
}

export type Failure = Exclude<Verdict, { kind: 'ok' }>;

/** What to do after a failed attempt. `give-up` says why, so the error can say what to do next. */
export type Step =
  | { kind: 'retry'; delayMs: number }
  | { kind: 'give-up'; because: 'not-retryable' | 'attempts' }
  | { kind: 'give-up'; because: 'budget'; neededMs: number };

/**
 * The retry decision after attempt number `attempt` failed with `failure`, having slept `waitedMs` so
 * far: a rate limit waits as advised (backoff when the platform gave no advice), transient failures
 * back off, anything else fails at once.
 */
export function nextStep(
  failure: Failure,
  attempt: number,
  waitedMs: number,
  policy: RetryPolicy,
  random: () => number,
): Step {
  if (failure.kind === 'failed') return { kind: 'give-up', because: 'not-retryable' };
  if (attempt >= policy.maxAttempts) return { kind: 'give-up', because: 'attempts' };
  const delayMs =
    failure.kind === 'rate-limited' && failure.retryAfterMs !== undefined
      ? failure.retryAfterMs + Math.round(random() * RATE_LIMIT_SPREAD_MS)
      : backoffDelayMs(attempt, policy, random);
  if (waitedMs + delayMs > policy.maxTotalWaitMs)
    return { kind: 'give-up', because: 'budget', neededMs: delayMs };
  return { kind: 'retry', delayMs };
}
