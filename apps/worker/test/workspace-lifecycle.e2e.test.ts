// A thread's room over its life (docs/adr/0046): deleted once the thread expires, never while a turn
// holds it; a turn that leaves it over its disk budget tells the thread, and the thread's next
// messages wait, kept, until it is cleaned. Real Redis, a real worker and the built-in agent, whose
// shell tool writes the files.
import { access, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@tributary/testkit';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import {
  message,
  metric,
  replies,
  startHarness,
  type WorkerHarness,
  waitForReplies,
} from './worker-fixture.js';

let h: WorkerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function workspaceRoot(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'tributary-rooms-'));
  onTestFinished(() => rm(root, { recursive: true, force: true }));
  return root;
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

const notices = (harness: WorkerHarness, thread: string, text: string) =>
  harness.sent.filter((m) => m.thread === thread && m.kind === 'notice' && m.text.includes(text));

const logged = (harness: WorkerHarness, msg: string) => harness.logs.filter((line) => line.msg === msg);

describe('a thread’s room when the thread expires', { timeout: 60_000 }, () => {
  it('is deleted with the thread’s keys, while a thread whose turn is running keeps its room', async () => {
    const root = await workspaceRoot();
    h = await startHarness({ AGENT_WORKSPACES: root }, { idleTtlMs: 2_000 });
    const harness = h;
    const [idle, busy] = ['gateway:C1:idle', 'gateway:C1:busy'];
    const idleRoom = join(root, 'gateway', 'C1', 'idle');
    const busyRoom = join(root, 'gateway', 'C1', 'busy');

    await h.send(busy, message('@agent {"shell": "echo kept > notes.txt"}'));
    await waitForReplies(h, busy, 1);
    // The busy thread's second turn runs until the test lets it end, long past the idle TTL.
    await h.send(
      busy,
      message('@agent {"shell": "while [ ! -e release ]; do sleep 0.05; done; echo released"}'),
    );
    await waitFor(async () => (await harness.worker.queue.admin.state(busy)).status === 'running', {
      what: 'the busy thread’s second turn running',
    });
    await h.send(idle, message('@agent {"shell": "echo gone > notes.txt"}'));
    await waitForReplies(h, idle, 1);
    expect(await exists(join(idleRoom, 'workspace', 'notes.txt'))).toBe(true);

    const deleted = 'workspace and agent home of an expired thread deleted';
    await waitFor(() => logged(harness, deleted).length > 0, { what: 'the expired thread’s room deleted' });
    expect(logged(h, deleted)).toEqual([expect.objectContaining({ thread: idle })]);
    expect(await exists(idleRoom)).toBe(false);
    expect(await h.worker.queue.turns.expired(idle)).toBe(true);
    // The sweep that deleted it saw the busy thread's room too, last recorded before the idle one's.
    expect((await h.worker.queue.admin.state(busy)).status).toBe('running');
    expect(await exists(join(busyRoom, 'workspace', 'notes.txt'))).toBe(true);
    expect(logged(h, 'a thread came back while its room was being deleted; its room is kept')).toEqual([]);
    expect(await metric(h, 'tributary_workspaces_expired_total')).toBe(1);
    expect(await readdir(join(root, '.expired'))).toEqual([]);

    await writeFile(join(busyRoom, 'workspace', 'release'), '');
    await waitForReplies(h, busy, 2);
    expect(replies(h, busy)[1]!.text).toContain('released');
    // The expired thread starts afresh in an empty room.
    await h.send(idle, message('@agent {"shell": "ls -A; echo listed"}'));
    await waitForReplies(h, idle, 2);
    expect(replies(h, idle)[1]!.text).not.toContain('notes.txt');
    expect(replies(h, idle)[1]!.text).toContain('listed');
  });
});

describe('a thread’s disk budget', { timeout: 60_000 }, () => {
  const THREAD = 'gateway:C1:T1';
  const OVER = '@agent {"shell": "head -c 3000000 /dev/urandom > big.bin; echo written"}';

  async function overBudget(env: Record<string, string> = {}) {
    const root = await workspaceRoot();
    // A short idle TTL sweeps often, so the workspace gauge follows within the test; the thread is
    // never idle that long. Waiting batches are retried every 200 ms.
    const harness = await startHarness(
      { AGENT_WORKSPACES: root, AGENT_WORKSPACE_BUDGET_MB: '1', ...env },
      { idleTtlMs: 20_000, deferDelayMs: 50, deferMaxDelayMs: 200 },
    );
    h = harness;
    await harness.send(THREAD, message(OVER));
    await waitForReplies(harness, THREAD, 1);
    // The notice goes out after the reply, as a message of its own.
    await waitFor(() => notices(harness, THREAD, "This thread's files now take").length > 0, {
      what: 'the over-budget notice sent',
    });
    return { harness, workspace: join(root, 'gateway', 'C1', 'T1', 'workspace') };
  }

  it('tells the thread of a turn that ends over it, and holds its next message until the room is cleaned', async () => {
    const { harness, workspace } = await overBudget();
    expect(replies(harness, THREAD)[0]!.text).toContain('written');
    expect(notices(harness, THREAD, "This thread's files now take")).toEqual([
      expect.objectContaining({
        text: expect.stringContaining('more than the 1.0 MB it may use. Its next messages will wait, kept'),
      }),
    ]);
    const [warned] = logged(
      harness,
      "the thread's workspace and agent home are over its disk budget; its next turns wait until they are cleaned",
    );
    expect(warned).toMatchObject({ level: 40, thread: THREAD, budgetBytes: 1024 * 1024 });
    expect(warned!.bytes).toBeGreaterThanOrEqual(3_000_000);
    expect(await metric(harness, 'tributary_workspace_over_budget_turns_total')).toBe(1);
    await waitFor(async () => (await metric(harness, 'tributary_workspace_bytes')) >= 3_000_000, {
      what: 'the workspace gauge showing the room',
    });
    expect(await metric(harness, 'tributary_workspace_volume_free_bytes')).toBeGreaterThan(0);
    expect(await metric(harness, 'tributary_workspace_volume_size_bytes')).toBeGreaterThan(0);

    await harness.send(THREAD, message('@agent {"reply": "answered once cleaned"}'));
    const waiting = 'the turn could not start; its batch is put back, not counted as failed';
    await waitFor(() => logged(harness, waiting).length >= 3, { what: 'the batch put back three times' });
    // Told once however often it was put back; the message is still in the inbox, unanswered.
    expect(notices(harness, THREAD, 'These messages are waiting')).toHaveLength(1);
    expect(replies(harness, THREAD)).toHaveLength(1);
    expect((await harness.worker.queue.admin.state(THREAD)).backlog).toBe(1);
    expect(logged(harness, waiting)[0]).toMatchObject({ level: 40, thread: THREAD });

    await rm(join(workspace, 'big.bin'));
    await waitForReplies(harness, THREAD, 2);
    expect(replies(harness, THREAD)[1]!.text).toContain('answered once cleaned');
    expect((await harness.worker.queue.admin.state(THREAD)).backlog).toBe(0);
    expect(await metric(harness, 'tributary_workspace_over_budget_turns_total')).toBe(1);
  });

  it('lets a reset that deletes the room free the thread', async () => {
    const { harness, workspace } = await overBudget({ AGENT_WORKSPACE_ON_RESET: 'delete' });
    expect(notices(harness, THREAD, 'send /reset to start afresh without them')).toHaveLength(1);

    await harness.worker.controls.reset(THREAD);
    await harness.send(THREAD, message('@agent {"shell": "ls -A; echo listed"}'));
    await waitForReplies(harness, THREAD, 2);
    expect(replies(harness, THREAD)[1]!.text).not.toContain('big.bin');
    expect(await exists(join(workspace, 'big.bin'))).toBe(false);
    expect(notices(harness, THREAD, 'These messages are waiting')).toEqual([]);
  });
});
