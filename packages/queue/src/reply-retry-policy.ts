/** How long and how often a committed reply is retried while its platform cannot be reached. */
export interface ReplyRetryPolicy {
  /** After this long in the outbox (from its commit), an undeliverable reply becomes a dead reply. */
  horizonMs: number;
  /** The first backoff step; each further one doubles, up to `maxDelayMs`. */
  firstDelayMs: number;
  maxDelayMs: number;
}

/**
 * The policy where the operator sets none: a day of retries, a minute apart at most. The horizon and
 * the longest step are the operator's to change (REPLY_RETRY_*), the first step is not.
 */
export const DEFAULT_REPLY_RETRY: Readonly<ReplyRetryPolicy> = Object.freeze({
  horizonMs: 24 * 60 * 60 * 1000,
  firstDelayMs: 1_000,
  maxDelayMs: 60_000,
});

export type ReplyStep = { kind: 'retry'; delayMs: number } | { kind: 'bury'; why: string };

/**
 * After failed attempt number `attempts` (1-based) of a reply that has waited `ageMs`: wait as the
 * platform advised (`retryAfterMs`) or back off with equal jitter; give up once the next attempt would
 * fall past the horizon.
 */
export function replyStep(
  attempts: number,
  ageMs: number,
  retryAfterMs: number | undefined,
  policy: ReplyRetryPolicy,
  random: () => number,
): ReplyStep {
  const step = Math.min(policy.maxDelayMs, policy.firstDelayMs * 2 ** (attempts - 1));
  const delayMs = retryAfterMs ?? Math.round(step / 2 + (random() * step) / 2);
  if (ageMs + delayMs > policy.horizonMs) {
    return { kind: 'bury', why: `undeliverable for ${Math.round(ageMs / 1000)} s (${attempts} attempts)` };
  }
  return { kind: 'retry', delayMs };
}
