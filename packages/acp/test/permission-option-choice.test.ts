import { describe, expect, it } from 'vitest';
import { choosePermission, type PermissionOption, type PermissionOptionKind } from '../src/index.js';

const options = (...kinds: PermissionOptionKind[]): PermissionOption[] =>
  kinds.map((kind) => ({ optionId: kind, name: kind, kind }));

describe('choosePermission', () => {
  it('never grants more than the policy names', () => {
    expect(choosePermission('allow-once', options('allow_always', 'reject_once'), false)).toEqual({
      outcome: 'selected',
      optionId: 'reject_once',
    });
  });

  it('falls back to a narrower grant', () => {
    expect(choosePermission('allow-always', options('allow_once', 'reject_once'), false)).toEqual({
      outcome: 'selected',
      optionId: 'allow_once',
    });
  });

  it('rejects once when it can, always when it must', () => {
    expect(choosePermission('reject', options('reject_always', 'reject_once'), false)).toMatchObject({
      optionId: 'reject_once',
    });
    expect(choosePermission('reject', options('allow_once', 'reject_always'), false)).toMatchObject({
      optionId: 'reject_always',
    });
  });

  it('cancels when no option fits or the turn is being cancelled', () => {
    expect(choosePermission('reject', options('allow_once'), false)).toEqual({ outcome: 'cancelled' });
    expect(choosePermission('allow-always', options('allow_always'), true)).toEqual({ outcome: 'cancelled' });
  });
});
