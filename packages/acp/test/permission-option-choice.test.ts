import { describe, expect, it } from 'vitest';
import {
  choosePermission,
  type PermissionOption,
  type PermissionOptionKind,
  type PermissionPolicy,
  policyFor,
} from '../src/index.js';

const options = (...kinds: PermissionOptionKind[]): PermissionOption[] =>
  kinds.map((kind) => ({ optionId: kind, name: kind, kind }));

const ALL: PermissionOptionKind[] = ['reject_always', 'reject_once', 'allow_once', 'allow_always'];
const REJECT_ONLY: PermissionOptionKind[] = ['reject_always', 'reject_once'];

describe('choosePermission', () => {
  it.each<[PermissionPolicy, PermissionOptionKind[], string | undefined]>([
    // Every option offered: each policy picks the one it names.
    ['reject', ALL, 'reject_once'],
    ['allow-once', ALL, 'allow_once'],
    ['allow-always', ALL, 'allow_always'],
    ['allow', ALL, 'allow_always'],
    // Never a broader grant than the policy names; a narrower one or a refusal instead.
    ['allow-once', ['allow_always', 'reject_once'], 'reject_once'],
    ['allow-always', ['allow_once', 'reject_once'], 'allow_once'],
    ['reject', ['allow_once', 'reject_always'], 'reject_always'],
    // openab's order: allow_always, allow_once, then anything but a refusal; never a refusal.
    ['allow', ['allow_once', 'reject_once'], 'allow_once'],
    ['allow', REJECT_ONLY, undefined],
    // No fitting option at all.
    ['reject', ['allow_once'], undefined],
    ['allow-once', [], undefined],
  ])('%s with %j picks %s', (policy, kinds, optionId) => {
    expect(choosePermission(policy, options(...kinds), false)).toEqual(
      optionId === undefined ? { outcome: 'cancelled' } : { outcome: 'selected', optionId },
    );
  });

  it('picks the first option that is not a refusal under allow when the kinds are unknown', () => {
    const offered = [
      { optionId: 'no', name: 'no', kind: 'reject_once' as const },
      { optionId: 'future', name: 'future', kind: 'allow_for_project' as PermissionOptionKind },
    ];
    expect(choosePermission('allow', offered, false)).toEqual({ outcome: 'selected', optionId: 'future' });
    expect(choosePermission('allow-always', offered, false)).toEqual({ outcome: 'selected', optionId: 'no' });
  });

  it('cancels while the turn is being cancelled, whatever the policy', () => {
    for (const policy of ['reject', 'allow-once', 'allow-always', 'allow'] as const) {
      expect(choosePermission(policy, options(...ALL), true)).toEqual({ outcome: 'cancelled' });
    }
  });
});

describe('policyFor', () => {
  const rules = { policy: 'allow-once', byKind: { fetch: 'reject', other: 'allow' } } as const;

  it.each([
    ['fetch', 'reject'],
    ['edit', 'allow-once'],
    ['other', 'allow'],
    // ACP: a tool call without a kind is `other`.
    [undefined, 'allow'],
    [null, 'allow'],
  ] as const)('answers %s requests with %s', (kind, policy) => {
    expect(policyFor(rules, kind)).toBe(policy);
  });

  it('falls back to the policy without rules', () => {
    expect(policyFor({ policy: 'reject' }, 'execute')).toBe('reject');
  });
});
