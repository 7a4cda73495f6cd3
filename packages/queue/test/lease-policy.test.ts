import { describe, expect, it } from 'vitest';
import { heartbeatIntervalMs, heartbeatVerdict } from '../src/lease-policy.js';

describe('heartbeat policy', () => {
  const leaseMs = 30_000;
  it.each([
    [
      'renewed extends the trust window',
      1_000,
      5_000,
      { kind: 'renewed' },
      { kind: 'keep', trustedUntil: 21_000 },
    ],
    [
      'fenced aborts at once',
      1_000,
      50_000,
      { kind: 'fenced' },
      { kind: 'abort', why: 'lease taken over by another owner' },
    ],
    [
      'an error inside the window keeps going',
      1_000,
      5_000,
      { kind: 'error' },
      { kind: 'keep', trustedUntil: 5_000 },
    ],
    [
      'an error past the window aborts',
      5_000,
      5_000,
      { kind: 'error' },
      { kind: 'abort', why: 'lease could not be renewed before it expired' },
    ],
  ] as const)('%s', (_, now, trustedUntil, result, verdict) => {
    expect(heartbeatVerdict(now, trustedUntil, result, leaseMs)).toEqual(verdict);
  });

  it('beats three times per lease', () => {
    expect(heartbeatIntervalMs(30_000)).toBe(10_000);
    expect(heartbeatIntervalMs(15)).toBe(10);
  });
});
