import { waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postSlackEvent, type Stack, startStack } from './stack-fixture.js';

const ADMIN_TOKEN = 'stack-admin-token-0123456789abcdef';
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ ADMIN_TOKEN });
});
afterAll(() => stack.close());

const channel = 'C0EDITS';
const root = '1700000000.000100';
const thread = `slack:${channel}:${root}`;
let eventIds = 0;

async function deliver(event: Record<string, unknown>) {
  const body = JSON.stringify({ type: 'event_callback', team_id: 'T1', event_id: `EvE${++eventIds}`, event });
  const answer = await postSlackEvent(stack, body);
  expect(answer.status).toBe(200);
  return answer.body;
}

const say = (ts: string, text: string) =>
  deliver({ type: 'message', channel, user: 'U1', text, ts, ...(ts === root ? {} : { thread_ts: root }) });

/** Slack's `message_changed` as documented: the message as it now reads, under the event's channel. */
const edit = (ts: string, text: string, editedTs: string) =>
  deliver({
    type: 'message',
    subtype: 'message_changed',
    hidden: true,
    channel,
    ts: editedTs,
    event_ts: editedTs,
    message: { type: 'message', user: 'U1', text, ts, thread_ts: root, edited: { user: 'U1', ts: editedTs } },
    previous_message: { type: 'message', user: 'U1', text: '(before)', ts, thread_ts: root },
  });

/** Slack's `message_deleted`: the message is named by `deleted_ts`. */
const remove = (ts: string, eventTs: string) =>
  deliver({
    type: 'message',
    subtype: 'message_deleted',
    hidden: true,
    channel,
    ts: eventTs,
    event_ts: eventTs,
    deleted_ts: ts,
    previous_message: { type: 'message', user: 'U1', text: '(before)', ts, thread_ts: root },
  });

const answers = () =>
  stack
    .calls('slack', 'chat.postMessage')
    .map((c) => c.body as { channel: string; text: string })
    .filter((b) => b.channel === channel)
    .map((b) => b.text);

async function receipt(ts: string) {
  const response = await fetch(
    `${stack.ingress.adminUrl}/admin/threads/${encodeURIComponent(thread)}/messages/${ts}`,
    { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } },
  );
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('edits and deletes through ingress, a worker and the built-in agent', () => {
  it('applies edits and deletes to waiting messages, and sends a later edit as a marked event', async () => {
    expect(await say(root, '<@UBOT> long job\n@agent {"delayMs": 30000}')).toMatchObject({
      outcome: 'accepted',
    });
    await waitFor(async () => (await stack.worker.queue.admin.state(thread)).status === 'running', {
      what: 'the long turn to start',
    });
    expect(await say('1700000001.000100', 'draft wording')).toMatchObject({ outcome: 'accepted' });
    expect(await say('1700000002.000100', 'to be deleted')).toMatchObject({ outcome: 'accepted' });
    expect(await say('1700000003.000100', 'stays as sent')).toMatchObject({ outcome: 'accepted' });

    expect(await edit('1700000001.000100', 'final wording', '1700000010.000100')).toMatchObject({
      outcome: 'edited',
    });
    // Slack retries a delivery it saw no answer to: the same edit is applied once.
    expect(await edit('1700000001.000100', 'final wording', '1700000010.000100')).toMatchObject({
      outcome: 'duplicate',
    });
    expect(await remove('1700000002.000100', '1700000011.000100')).toMatchObject({
      outcome: 'deleted',
      dispatched: false,
    });
    expect((await receipt('1700000001.000100')).body).toMatchObject({ status: 'queued', editsInPlace: 1 });
    expect((await receipt('1700000002.000100')).body).toMatchObject({ status: 'deleted' });
    const running = await receipt(root);
    expect(running.body).toMatchObject({ status: 'batched', batch: { outcome: 'running' } });

    // End the long turn; the waiting messages run next.
    expect(await say('1700000004.000100', '/cancel')).toMatchObject({ outcome: 'control' });
    await waitFor(() => answers().some((t) => t.includes('final wording')), {
      what: 'the waiting messages to run',
    });
    const next = answers().filter((t) => t.includes('final wording'));
    expect(next).toHaveLength(1);
    expect(next[0]).toContain('Received 2 messages');
    expect(next[0]).toContain('stays as sent');
    expect(answers().some((t) => t.includes('draft wording') || t.includes('to be deleted'))).toBe(false);
    await waitFor(async () => (await stack.worker.queue.admin.state(thread)).status === 'idle', {
      what: 'idle',
    });
    expect((await receipt(root)).body).toMatchObject({ status: 'batched', batch: { outcome: 'cancelled' } });
    const edited = (await receipt('1700000001.000100')).body;
    expect(edited).toMatchObject({ status: 'batched', batch: { outcome: 'complete' }, editsInPlace: 1 });
    expect((edited.batch as { id: string }).id).not.toBe((running.body.batch as { id: string }).id);

    // After dispatch, an edit is an event of its own that says what it edits.
    expect(await edit('1700000003.000100', 'stays, but edited', '1700000020.000100')).toMatchObject({
      outcome: 'accepted',
    });
    await waitFor(() => answers().some((t) => t.includes('stays, but edited')), { what: 'the edit to run' });
    const editTurn = answers().find((t) => t.includes('stays, but edited'))!;
    expect(editTurn).toContain('Received 1 message');
    expect(editTurn).toContain('edit at 2023-11-14T22:13:40.000Z of the message of 2023-11-14T22:13:23.000Z');
    await waitFor(async () => (await stack.worker.queue.admin.state(thread)).status === 'idle', {
      what: 'idle',
    });
    expect((await receipt('1700000003.000100')).body).toMatchObject({
      status: 'batched',
      batch: { outcome: 'complete' },
      edit: { status: 'batched', batch: { outcome: 'complete' } },
    });

    // A delete after dispatch is recorded and starts no turn.
    const turns = (await stack.worker.queue.admin.history(thread)).length;
    expect(await remove('1700000003.000100', '1700000021.000100')).toMatchObject({
      outcome: 'deleted',
      dispatched: true,
    });
    expect(await stack.worker.queue.admin.state(thread)).toMatchObject({ status: 'idle', backlog: 0 });
    expect(await stack.worker.queue.admin.history(thread)).toHaveLength(turns);
    expect((await receipt('1700000003.000100')).body).toMatchObject({ deletedAfterDispatch: true });
    expect((await receipt('1700000099.000100')).status).toBe(404);
  }, 60_000);
});
