import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReplicationLagError } from '../src/errors.js';
import { BatchHistory } from '../src/stores/batch-history.js';
import { MessageReceipts } from '../src/stores/message-receipts.js';
import { ThreadControls } from '../src/stores/thread-controls.js';
import { keysOf } from '../src/testing.js';
import { type ThreadQueue, threadQueue } from '../src/threads/thread-queue.js';
import { claimNow, done, enqueueAll, type QueueFixture, queueFixture } from './fixture.js';

let f: QueueFixture;
beforeAll(async () => {
  f = await queueFixture();
});
afterAll(() => f.close());

const edit = (messageId: string, body: string, key = `${messageId}@edit-${body}`) =>
  ({ action: 'edit', messageId, idempotencyKey: key, body }) as const;
const del = (messageId: string) =>
  ({ action: 'delete', messageId, idempotencyKey: `${messageId}@delete` }) as const;

function receipts(queue: ThreadQueue) {
  return new MessageReceipts(
    f.redis,
    (thread) => keysOf(queue, thread),
    new BatchHistory(f.redis, (thread) => keysOf(queue, thread), queue.config.historyLimit),
  );
}

async function inbox(queue: ThreadQueue, thread: string) {
  return (await f.redis.xrange(keysOf(queue, thread).inbox, '-', '+')).map(([id, fields]) => ({
    id,
    body: fields[fields.indexOf('body') + 1],
    tok: fields[fields.indexOf('tok') + 1],
  }));
}

describe('edits and deletes of buffered messages', () => {
  it('replaces a buffered message in place: same entry, same place in line, new body and tokens', async () => {
    const { queue } = await f.make({ countTokens: (body) => body.length });
    await enqueueAll(queue, 'th', ['one', 'two', 'three']);
    const before = await inbox(queue, 'th');
    expect(await queue.intake.revise('th', edit('m2', 'two, edited'))).toBe('applied');
    const after = await inbox(queue, 'th');
    expect(after.map((e) => e.id)).toEqual(before.map((e) => e.id));
    expect(after.map((e) => e.body)).toEqual(['one', 'two, edited', 'three']);
    expect(after[1]!.tok).toBe(String('two, edited'.length));

    const claimed = await claimNow(queue, 'th');
    if (claimed.kind !== 'batch') throw new Error(`expected a batch, got ${claimed.kind}`);
    expect(claimed.batch.messages.map((m) => [m.id, m.body, m.seq])).toEqual([
      ['m1', 'one', 1],
      ['m2', 'two, edited', 2],
      ['m3', 'three', 3],
    ]);
  });

  it('never issues an entry id twice after rewriting the tail', async () => {
    const { queue } = await f.make();
    await enqueueAll(queue, 'th', ['one', 'two', 'three']);
    const [, , last] = await inbox(queue, 'th');
    expect(await queue.intake.revise('th', del('m3'))).toBe('applied');
    expect(await queue.intake.revise('th', edit('m1', 'uno'))).toBe('applied');
    const next = await queue.intake.enqueue('th', { id: 'm4', body: 'four' });
    if (next.outcome !== 'accepted') throw new Error('m4 not accepted');
    const [lastMs, lastSeq] = last!.id.split('-').map(Number) as [number, number];
    const [nextMs, nextSeq] = next.streamId.split('-').map(Number) as [number, number];
    expect(nextMs > lastMs || (nextMs === lastMs && nextSeq > lastSeq)).toBe(true);
    expect((await inbox(queue, 'th')).map((e) => e.body)).toEqual(['uno', 'two', 'four']);
  });

  it('sends an edit with too much waiting behind it as an event of its own, changing nothing', async () => {
    const { queue } = await f.make({ editRewriteMax: 2, editRewriteMaxBytes: 40 });
    await enqueueAll(queue, 'th', ['one', 'two', 'three']);
    const before = await inbox(queue, 'th');
    // Three entries from m1 on: more than two.
    expect(await queue.intake.revise('th', edit('m1', 'uno'))).toBe('dispatched');
    // Two entries from m2 on, but their bodies and fields outweigh 40 bytes.
    expect(await queue.intake.revise('th', edit('m2', 'dos'))).toBe('dispatched');
    expect(await queue.intake.revise('th', edit('m3', 'tres'))).toBe('applied');
    expect((await inbox(queue, 'th')).map((e) => e.body)).toEqual(['one', 'two', 'tres']);
    expect((await inbox(queue, 'th')).map((e) => e.id)).toEqual(before.map((e) => e.id));
  });

  it('applies a redelivered edit or delete once', async () => {
    const { queue } = await f.make();
    await enqueueAll(queue, 'th', ['one', 'two']);
    expect(await queue.intake.revise('th', edit('m1', 'uno', 'edit-1'))).toBe('applied');
    expect(await queue.intake.revise('th', edit('m1', 'uno', 'edit-1'))).toBe('duplicate');
    expect(await queue.intake.revise('th', del('m2'))).toBe('applied');
    expect(await queue.intake.revise('th', del('m2'))).toBe('duplicate');
    expect((await inbox(queue, 'th')).map((e) => e.body)).toEqual(['uno']);
    expect(await receipts(queue).receipt('th', 'm1')).toMatchObject({ status: 'queued', editsInPlace: 1 });
  });

  it('removes a deleted buffered message, so the turn never sees it', async () => {
    const { queue } = await f.make();
    await enqueueAll(queue, 'th', ['one', 'two', 'three']);
    expect(await queue.intake.revise('th', del('m2'))).toBe('applied');
    const claimed = await claimNow(queue, 'th');
    if (claimed.kind !== 'batch') throw new Error(`expected a batch, got ${claimed.kind}`);
    expect(claimed.batch.messages.map((m) => m.body)).toEqual(['one', 'three']);
    expect(await receipts(queue).receipt('th', 'm2')).toEqual({
      thread: 'th',
      messageId: 'm2',
      status: 'deleted',
    });
  });

  it('lets a deleted only message leave the thread idle', async () => {
    const { queue } = await f.make();
    await enqueueAll(queue, 'th', ['one']);
    expect(await queue.intake.revise('th', del('m1'))).toBe('applied');
    expect(await claimNow(queue, 'th')).toEqual({ kind: 'empty' });
    expect(await queue.admin.state('th')).toMatchObject({ status: 'idle', backlog: 0 });
  });

  it('leaves nothing of a committed batch in the inbox after an edit rewrote the entries behind it', async () => {
    const { queue } = await f.make();
    await enqueueAll(queue, 'th', ['zero']);
    // The batch in flight keeps the inbox's first node alive, so the rewrite below leaves the entries
    // it deleted in that node, ahead of the ones it wrote again under the same ids.
    const first = await claimNow(queue, 'th');
    if (first.kind !== 'batch') throw new Error('no batch');
    await enqueueAll(queue, 'th', ['one', 'two'], 2);
    expect(await queue.intake.revise('th', edit('m2', 'one, edited'))).toBe('applied');
    expect(await queue.intake.revise('th', del('m3'))).toBe('applied');
    const second = await queue.turns.commit(first.batch.lease, done);
    if (second.kind !== 'batch') throw new Error('no second batch');
    expect(second.batch.messages.map((m) => m.body)).toEqual(['one, edited']);
    expect(await queue.turns.commit(second.batch.lease, done)).toEqual({ kind: 'idle' });
    expect(await inbox(queue, 'th')).toEqual([]);
    expect(await queue.admin.state('th')).toMatchObject({ status: 'idle', backlog: 0 });
  });

  it('leaves a dispatched message alone: an edit is the caller’s new event, a delete is recorded', async () => {
    const { queue } = await f.make();
    await enqueueAll(queue, 'th', ['one']);
    const claimed = await claimNow(queue, 'th');
    if (claimed.kind !== 'batch') throw new Error(`expected a batch, got ${claimed.kind}`);
    expect(await queue.intake.revise('th', edit('m1', 'uno'))).toBe('dispatched');
    expect(claimed.batch.messages[0]!.body).toBe('one');
    // The caller enqueues the edit as an event of its own; a later edit replaces that one in place.
    await queue.intake.enqueue('th', { id: 'm1', idempotencyKey: 'm1@edit-uno', body: 'uno', edit: true });
    expect(
      await queue.intake.enqueue('th', { id: 'm1', idempotencyKey: 'm1@edit-uno', body: 'uno', edit: true }),
    ).toMatchObject({
      outcome: 'duplicate',
    });
    expect(await queue.intake.revise('th', edit('m1', 'uno!'))).toBe('applied');
    expect((await inbox(queue, 'th')).map((e) => e.body)).toEqual(['one', 'uno!']);
    expect(await receipts(queue).receipt('th', 'm1')).toEqual({
      thread: 'th',
      messageId: 'm1',
      status: 'batched',
      batch: { id: claimed.batch.id, outcome: 'running' },
      // The later edit replaced the waiting edit event in place.
      editsInPlace: 1,
      edit: { status: 'queued' },
    });
    // Deleting it now removes the waiting edit and records the delete of the dispatched original,
    // so the turn boundary finds nothing more to run.
    expect(await queue.intake.revise('th', del('m1'))).toBe('applied');
    expect(await queue.turns.commit(claimed.batch.lease, done)).toEqual({ kind: 'idle' });
    expect(await receipts(queue).receipt('th', 'm1')).toMatchObject({
      status: 'batched',
      batch: { id: claimed.batch.id, outcome: 'complete', stopReason: 'end_turn' },
      edit: { status: 'dropped' },
      deletedAfterDispatch: true,
    });
  });

  it('records a delete after dispatch once and starts nothing', async () => {
    const { queue } = await f.make();
    await enqueueAll(queue, 'th', ['one']);
    const claimed = await claimNow(queue, 'th');
    if (claimed.kind !== 'batch') throw new Error(`expected a batch, got ${claimed.kind}`);
    expect(await queue.intake.revise('th', del('m1'))).toBe('dispatched');
    expect(await queue.intake.revise('th', del('m1'))).toBe('duplicate');
    expect(await queue.turns.commit(claimed.batch.lease, done)).toEqual({ kind: 'idle' });
    expect(await receipts(queue).receipt('th', 'm1')).toMatchObject({
      status: 'batched',
      deletedAfterDispatch: true,
    });
  });

  it('does not know messages it never accepted or that /cancel-all dropped', async () => {
    const { queue } = await f.make();
    expect(await queue.intake.revise('th', edit('nope', 'x'))).toBe('notFound');
    await enqueueAll(queue, 'th', ['one']);
    await new ThreadControls(f.redis, (thread) => keysOf(queue, thread), queue.config).cancelAll('th');
    expect(await queue.intake.revise('th', edit('m1', 'uno'))).toBe('notFound');
    expect(await receipts(queue).receipt('th', 'm1')).toMatchObject({ status: 'dropped' });
  });
});

describe('receipts', () => {
  it('says where each message is: refused, queued, in a running batch, in an ended batch', async () => {
    const { queue } = await f.make();
    const r = receipts(queue);
    await queue.intake.noteRefusal('th', 'm0', 'sender-not-allowed');
    await enqueueAll(queue, 'th', ['one', 'two']);
    expect(await r.receipt('th', 'm0')).toEqual({
      thread: 'th',
      messageId: 'm0',
      status: 'refused',
      reason: 'sender-not-allowed',
    });
    expect(await r.receipt('th', 'm1')).toEqual({ thread: 'th', messageId: 'm1', status: 'queued' });
    const claimed = await claimNow(queue, 'th');
    if (claimed.kind !== 'batch') throw new Error(`expected a batch, got ${claimed.kind}`);
    expect(await r.receipt('th', 'm2')).toMatchObject({
      status: 'batched',
      batch: { id: claimed.batch.id, outcome: 'running' },
    });
    await queue.turns.commit(claimed.batch.lease, { reply: 'ok', stopReason: 'cancelled' });
    expect(await r.receipt('th', 'm2')).toMatchObject({
      status: 'batched',
      batch: { id: claimed.batch.id, outcome: 'cancelled', stopReason: 'cancelled' },
    });
    expect(await r.receipt('th', 'never')).toBeNull();
  });

  it('shows a refused message that an edit got in as where the edit is', async () => {
    const { queue } = await f.make();
    await queue.intake.noteRefusal('th', 'm1', 'not-addressed');
    await queue.intake.enqueue('th', { id: 'm1', idempotencyKey: 'm1@edit', body: 'now for us', edit: true });
    expect(await receipts(queue).receipt('th', 'm1')).toEqual({
      thread: 'th',
      messageId: 'm1',
      status: 'queued',
    });
  });

  it('does not let a refusal overwrite an acceptance (a retry that got in)', async () => {
    const { queue } = await f.make();
    await enqueueAll(queue, 'th', ['one']);
    await queue.intake.noteRefusal('th', 'm1', 'backlog-full');
    expect(await receipts(queue).receipt('th', 'm1')).toMatchObject({ status: 'queued' });
  });

  it('keeps at most receiptsMax receipts per thread, oldest dropped first, expiring with the thread', async () => {
    const { queue } = await f.make({ receiptsMax: 3, receiptTtlMs: 60_000 });
    await enqueueAll(queue, 'th', ['1', '2', '3', '4', '5']);
    const k = keysOf(queue, 'th');
    expect((await f.redis.hkeys(k.receipts)).sort()).toEqual(['m3', 'm4', 'm5']);
    expect(await f.redis.zcard(k.receiptOrder)).toBe(3);
    // Kept while the thread holds a message: an edit must still find it.
    for (const key of [k.receipts, k.receiptOrder]) expect(await f.redis.pttl(key), key).toBe(-1);
    // A thread that holds none (here: never started) keeps a receipt for receiptTtlMs at most.
    await queue.intake.noteRefusal('quiet', 'm1', 'not-addressed');
    const quiet = keysOf(queue, 'quiet');
    for (const key of [quiet.receipts, quiet.receiptOrder]) {
      const ttl = await f.redis.pttl(key);
      expect(ttl, key).toBeGreaterThan(0);
      expect(ttl, key).toBeLessThanOrEqual(60_000);
    }
  });
});

describe('revisions under REDIS_ACK_REPLICAS', () => {
  it('are acknowledged only once replicated, as messages are: with no replica, an applied edit throws', async () => {
    const { queue, doorbell } = await f.make();
    await queue.intake.enqueue('th', { id: 'a', body: 'typo' });
    // The same thread, seen through a queue that asks one replica to confirm; this Redis has none.
    const confirming = threadQueue(
      f.redis,
      { ...queue.config, ackReplicas: 1, ackReplicasTimeoutMs: 20 },
      doorbell,
    );
    await expect(confirming.intake.revise('th', edit('a', 'fixed'))).rejects.toBeInstanceOf(
      ReplicationLagError,
    );
    // Not found: nothing was written, so nothing waits for a replica.
    expect(await confirming.intake.revise('th', edit('zz', 'x'))).toBe('notFound');
    // The edit is on the primary (only its acknowledgement was refused): its retry is the duplicate.
    expect(await queue.intake.revise('th', edit('a', 'fixed'))).toBe('duplicate');
  });
});
