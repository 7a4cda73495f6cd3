import { describe, expect, it } from 'vitest';
import { backoffMs, isRetryableStatus, retryAfterMs } from '../src/retry-policy.js';

describe('retry policy', () => {
  it('doubles the wait after each failed attempt up to the cap', () => {
    const policy = { firstRetryMs: 500, maxRetryMs: 5_000, maxAttempts: 10 };
    expect([1, 2, 3, 4, 5, 6].map((attempt) => backoffMs(policy, attempt))).toEqual([
      500, 1_000, 2_000, 4_000, 5_000, 5_000,
    ]);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(retryAfterMs('3', now)).toBe(3_000);
    expect(retryAfterMs(' 1.5 ', now)).toBe(1_500);
    expect(retryAfterMs('Wed, 01 Jan 2025 00:00:07 GMT', now)).toBe(7_000);
    expect(retryAfterMs('Tue, 31 Dec 2024 23:59:00 GMT', now)).toBe(0);
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs(null, now)).toBeUndefined();
  });

  it('retries overload and server errors, not refusals of the message', () => {
    expect([429, 500, 502, 503, 504].every(isRetryableStatus)).toBe(true);
    expect([400, 401, 403, 404, 413, 422].some(isRetryableStatus)).toBe(false);
  });
});
