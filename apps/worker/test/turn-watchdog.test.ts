import { describe, expect, it } from 'vitest';
import { type WatchdogLevel, watchdogVerdict } from '../src/turns/turn-watchdog.js';

const limits = { stallSoftMs: 10_000, stallHardMs: 30_000, turnTimeoutMs: 600_000 };

describe('turn watchdog policy', () => {
  it.each<[string, number, WatchdogLevel | undefined, WatchdogLevel | undefined]>([
    ['quiet for less than the soft limit', 9_999, undefined, undefined],
    ['soft stall reached', 10_000, undefined, 'soft'],
    ['soft stall already signalled', 20_000, 'soft', undefined],
    ['hard stall reached after soft', 30_000, 'soft', 'hard'],
    ['hard stall reached directly', 31_000, undefined, 'hard'],
    ['timeout reached', 600_000, 'hard', 'timeout'],
    ['timeout already signalled', 700_000, 'timeout', undefined],
  ])('%s', (_, quietMs, signalled, expected) => {
    expect(watchdogVerdict(1_000_000 + quietMs, 1_000_000, signalled, limits)).toBe(expected);
  });
});
