import { describe, expect, it } from 'vitest';
import { presenceDue, trustAfterWrite, wardenVerdict } from '../src/warden/warden-policy.js';

const TOLERANCE = 5_000;
const TTL = 10_000;

describe('the warden decides', () => {
  it.each([
    ['keeps a worker that pulsed and whose presence Redis confirmed', 1_000, 0, 9_000, 'keep'],
    ['revokes a worker silent for the whole tolerance', 5_000, 0, 9_000, 'revoke'],
    ['keeps a worker silent just short of it', 4_999, 0, 9_000, 'keep'],
    ['revokes when the presence could lapse unconfirmed', 8_000, 7_000, 8_000, 'revoke'],
    ['keeps just before the trusted presence could lapse', 7_999, 7_000, 8_000, 'keep'],
  ])('%s', (_, now, lastPulseAt, trustedUntil, expected) => {
    expect(wardenVerdict(now, { lastPulseAt, trustedUntil }, TOLERANCE).kind).toBe(expected);
  });

  it('trusts a confirmed write from its send time, keeping a fifth of the TTL as margin', () => {
    expect(trustAfterWrite(1_000, TTL)).toBe(9_000);
  });

  it.each([
    ['writes when a quarter of the TTL passed since the last write', 2_500, 0, 0, true],
    ['waits while the last write is fresh', 2_499, 0, 0, false],
    ['writes nothing for a worker that stopped answering', 6_000, 0, 0, false],
  ])('%s', (_, now, lastPulseAt, lastWriteAt, expected) => {
    expect(presenceDue(now, { lastPulseAt, lastWriteAt, trustedUntil: 0 }, TOLERANCE, TTL)).toBe(expected);
  });
});
