import { afterEach, describe, expect, it } from 'vitest';
import { message, replies, startHarness, type WorkerHarness, waitForReplies } from './worker-fixture.js';

let h: WorkerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const ALL_KINDS = [
  'read',
  'edit',
  'delete',
  'move',
  'search',
  'execute',
  'think',
  'fetch',
  'switch_mode',
  'other',
];

describe('a coding agent on a worker', () => {
  it('gets the answer its rules give to a permission request of each tool kind', async () => {
    h = await startHarness({
      AGENT_PERMISSION_POLICY: 'allow-once',
      AGENT_PERMISSION_RULES: 'read=allow,search=allow-always,fetch=reject,delete=reject',
    });
    await h.send('th', message(`@agent {"permissions": ${JSON.stringify(ALL_KINDS)}, "reply": "done"}`));
    await waitForReplies(h, 'th', 1);

    const lines = replies(h, 'th')[0]!.text.split('\n').slice(1);
    expect(lines).toEqual([
      'permission read: selected allow-always',
      'permission edit: selected allow-once',
      'permission delete: selected reject-once',
      'permission move: selected allow-once',
      'permission search: selected allow-always',
      'permission execute: selected allow-once',
      'permission think: selected allow-once',
      'permission fetch: selected reject-once',
      'permission switch_mode: selected allow-once',
      'permission other: selected allow-once',
    ]);
    const decisions = h.logs.filter((l) => l.msg === 'permission request answered');
    expect(decisions.map((l) => [l.toolKind, l.policy])).toContainEqual(['fetch', 'reject']);
  });

  it('allows edits and commands by default, once at a time', async () => {
    h = await startHarness();
    await h.send('th', message('@agent {"permissions": ["edit", "execute"], "reply": "done"}'));
    await waitForReplies(h, 'th', 1);

    expect(replies(h, 'th')[0]!.text).toContain(
      'permission edit: selected allow-once\npermission execute: selected allow-once',
    );
  });
});
