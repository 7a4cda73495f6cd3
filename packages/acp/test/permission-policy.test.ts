import { describe, expect, it } from 'vitest';
import type { PermissionPolicy, TurnEvent } from '../src/index.js';
import { scripted, startPool } from './support.js';

describe.each([
  [undefined, 'reject-once'],
  ['reject', 'reject-once'],
  ['allow-once', 'allow-once'],
  ['allow-always', 'allow-always'],
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
