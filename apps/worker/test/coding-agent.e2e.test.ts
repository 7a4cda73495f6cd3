import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOOL_KINDS } from '@tributary/acp';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { message, replies, startHarness, type WorkerHarness, waitForReplies } from './worker-fixture.js';

let h: WorkerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const ALL_KINDS = TOOL_KINDS;

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
    // A tool's title is the agent's words and may quote a secret; the log names the call by its id.
    expect(decisions.every((l) => typeof l.toolCallId === 'string' && !('tool' in l))).toBe(true);
    expect(JSON.stringify(decisions)).not.toContain('Scripted');
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

describe('workspaces per conversation', () => {
  it('gives two threads on one worker workspaces of their own, created on demand', async () => {
    const root = await mkdtemp(join(tmpdir(), 'tributary-cwd-'));
    onTestFinished(() => rm(root, { recursive: true, force: true }));
    h = await startHarness({ AGENT_WORKSPACES: root });
    const threads = ['gateway:discord:C1:T1', 'gateway:discord:C1:T2'];
    for (const thread of threads)
      await h.send(thread, message('@agent {"reportCwd": true, "reply": "here"}'));
    for (const thread of threads) await waitForReplies(h, thread, 1);

    const cwds = threads.map((thread) => /cwd (.+)$/m.exec(replies(h!, thread)[0]!.text)?.[1]);
    expect(cwds).toEqual([
      join(root, 'gateway', 'discord_3aC1', 'T1', 'workspace'),
      join(root, 'gateway', 'discord_3aC1', 'T2', 'workspace'),
    ]);
    for (const cwd of cwds) expect((await stat(cwd!)).isDirectory()).toBe(true);
  });

  it('deletes a reset thread’s workspace when so configured', async () => {
    const root = await mkdtemp(join(tmpdir(), 'tributary-cwd-'));
    onTestFinished(() => rm(root, { recursive: true, force: true }));
    h = await startHarness({ AGENT_WORKSPACES: root, AGENT_WORKSPACE_ON_RESET: 'delete' });
    const thread = 'slack:C1:T1';
    const dir = join(root, 'slack', 'C1', 'T1', 'workspace');
    await h.send(thread, message('@agent {"reply": "first"}'));
    await waitForReplies(h, thread, 1);
    await writeFile(join(dir, 'left-over.txt'), 'from the first session');

    await h.worker.controls.reset(thread);
    await h.send(thread, message('@agent {"reply": "after reset"}'));
    await waitForReplies(h, thread, 2);

    expect(await readdir(dir)).toEqual([]);
  });
});

describe('progress a user can see', () => {
  it('signals each tool call and the plan, in the order the agent sent them', async () => {
    h = await startHarness();
    await h.send(
      'th',
      message(
        '@agent {"plan": ["Read the code", "Fix it"], "toolKinds": ["read", "edit"], "reply": "fixed"}',
      ),
    );
    await waitForReplies(h, 'th', 1);

    expect(h.signals.map((s) => [s.kind, s.activity])).toEqual([
      ['started', undefined],
      ['progress', 'plan: 0/2 done, now: Read the code'],
      ['progress', 'running: Scripted read tool'],
      ['progress', 'running: Scripted edit tool'],
      ['finished', undefined],
    ]);
  });

  it('shows no progress when AGENT_PROGRESS is off', async () => {
    h = await startHarness({ AGENT_PROGRESS: 'off' });
    await h.send('th', message('@agent {"toolKinds": ["execute"], "reply": "ran"}'));
    await waitForReplies(h, 'th', 1);

    expect(h.signals.map((s) => s.kind)).toEqual(['started', 'finished']);
  });
});
