export interface RetryPolicy {
  /** Wait before the second attempt; doubled for each further one. */
  firstRetryMs: number;
  maxRetryMs: number;
  /** Attempts per message, the first included, before it is given up. */
  maxAttempts: number;
}

/** Exponential backoff after the given (1-based) failed attempt. */
export function backoffMs(policy: RetryPolicy, failedAttempt: number): number {
  return Math.min(policy.maxRetryMs, policy.firstRetryMs * 2 ** (failedAttempt - 1));
}

/** A Retry-After header (delay-seconds or HTTP-date) in milliseconds from `now`; undefined if absent or unreadable. */
export function retryAfterMs(header: string | null, now: number): number | undefined {
  if (header === null) return undefined;
  const value = header.trim();
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Worth another try: the receiver is overloaded or broken, not the message. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}
