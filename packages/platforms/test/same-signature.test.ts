import { describe, expect, it } from 'vitest';
import { signTimestamped } from '../src/hmac-signature.js';
import { sameSignature } from '../src/webhook-checks.js';

describe('sameSignature', () => {
  const expected = signTimestamped('a-webhook-secret', '1700000000', Buffer.from('{"a":1}'));

  it('accepts the computed signature and nothing else', () => {
    expect(sameSignature(expected, expected)).toBe(true);
    const lastChanged = `${expected.slice(0, -1)}${expected.endsWith('0') ? '1' : '0'}`;
    expect(sameSignature(lastChanged, expected)).toBe(false);
  });

  it('refuses a signature of another length, or the same length in UTF-16 but not in bytes, without throwing', () => {
    expect(sameSignature(expected.slice(0, -1), expected)).toBe(false);
    expect(sameSignature(`${expected}0`, expected)).toBe(false);
    expect(sameSignature('', expected)).toBe(false);
    expect(sameSignature(`${expected.slice(0, -1)}é`, expected)).toBe(false);
  });
});
