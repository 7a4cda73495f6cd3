import { describe, expect, it } from 'vitest';
import type { PermissionPolicy, TurnEvent } from '../src/index.js';
import { scripted, startPool } from './support.js';

describe.each([
  [undefined, 'allow-once'],
  ['reject', 'reject-once'],
  ['allow-once', 'allow-once'],
  ['allow-always', 'allow-always'],
  ['allow', 'allow-always'],
] as const)('permission policy %s', (policy: PermissionPolicy | undefined, optionId: string) => {
  it(`answers session/request_permission with ${optionId}`, async () => {
    const { pool } = await startPool(policy ? { permissionPolicy: policy } : {});
    const events: TurnEvent[] = [];

    const result = await pool.runTurn('thread-1', scripted({ permission: true, reply: 'ok' }), {
      onUpdate: (event) => events.push(event),
    });

    expect(result.text).toContain(`permission: selected ${optionId}`);
    expect(events).toContainEqual(
      expect.objectContaining({ kind: 'permission', outcome: { outcome: 'selected', optionId } }),
    );
  });
});

describe('permission rules by tool kind', () => {
  it('answers each tool kind by its rule and the rest by the policy', async () => {
    const { pool } = await startPool({
      permissionPolicy: 'reject',
      permissionRules: { read: 'allow', edit: 'allow-once', fetch: 'reject', execute: 'allow-always' },
    });
    const kinds = ['read', 'edit', 'execute', 'fetch', 'delete'];

    const { text } = await pool.runTurn('thread-1', scripted({ permissions: kinds, reply: 'ok' }));

    expect(text.split('\n').slice(1)).toEqual([
      'permission read: selected allow-always',
      'permission edit: selected allow-once',
      'permission execute: selected allow-always',
      'permission fetch: selected reject-once',
      'permission delete: selected reject-once',
    ]);
  });

  it('cancels under allow when the agent offers only refusals', async () => {
    const { pool } = await startPool({ permissionPolicy: 'allow' });

    const { text } = await pool.runTurn(
      'thread-1',
      scripted({ permissions: ['edit'], permissionOptions: ['reject_once', 'reject_always'], reply: 'ok' }),
    );

    expect(text).toContain('permission edit: cancelled');
  });
});
