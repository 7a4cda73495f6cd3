import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Batch } from '../src/batch.js';
import { ThreadControls } from '../src/stores/thread-controls.js';
import { keysOf } from '../src/testing.js';
import type { ClaimResult } from '../src/threads/thread-turns.js';
import { claimNow, enqueueAll, type QueueFixture, queueFixture } from './fixture.js';

let f: QueueFixture;
beforeAll(async () => {
  f = await queueFixture();
});
afterAll(() => f.close());

function batchOf(result: ClaimResult): Batch {
  if (result.kind !== 'batch') throw new Error(`expected a batch, got ${result.kind}`);
  return result.batch;
}
const ids = (batch: Batch) => batch.messages.map((m) => m.id);

describe('claim', () => {
  it('leases the thread under a new fence and hands over the waiting messages in order', async () => {
    const { queue } = await f.make();
    await enqueueAll(queue, 'th', ['a', 'b', 'c']);
    const batch = batchOf(await claimNow(queue, 'th'));
    expect(ids(batch)).toEqual(['m1', 'm2', 'm3']);
    expect(batch.messages.map((m) => m.seq)).toEqual([1, 2, 3]);
    expect(batch).toMatchObject({
      type: 'UserRequest',
      deliveries: 1,
      generation: 0,
      lease: { fence: 1, owner: 'owner-a' },
    });
    expect(batch.id).toMatch(/^[0-9a-f]{16}$/);
    expect(await queue.admin.state('th')).toMatchObject({ status: 'running', owner: 'owner-a', fence: 1 });
  });

  it('ignores a doorbell of a past epoch', async () => {
    const { queue } = await f.make();
    await enqueueAll(queue, 'th', ['a']);
    expect(await queue.turns.claim('th', 0, 'x')).toEqual({ kind: 'stale' });
    expect(await queue.turns.claim('th', 2, 'x')).toEqual({ kind: 'stale' });
  });

  it('answers busy with the time left while another owner holds a live lease', async () => {
    const { queue } = await f.make({ leaseMs: 5_000 });
    await enqueueAll(queue, 'th', ['a']);
    const epoch = (await queue.admin.state('th')).epoch;
    batchOf(await queue.turns.claim('th', epoch, 'owner-a'));
    const second = await queue.turns.claim('th', epoch, 'owner-b');
    expect(second.kind).toBe('busy');
    if (second.kind === 'busy') expect(second.retryInMs).toBeGreaterThan(4_000);
  });

  it('re-delivers an expired owner’s batch first, unchanged, under a higher fence', async () => {
    const { queue } = await f.make({ leaseMs: 50, maxBatchMessages: 2 });
    await enqueueAll(queue, 'th', ['a', 'b', 'c']);
    const epoch = (await queue.admin.state('th')).epoch;
    const first = batchOf(await queue.turns.claim('th', epoch, 'owner-a'));
    await f.leaseExpiry(first.lease);
    const again = batchOf(await queue.turns.claim('th', epoch, 'owner-b'));
    expect(ids(again)).toEqual(ids(first));
    expect(again.id).toBe(first.id);
    expect(again).toMatchObject({
      type: 'Continuation',
      deliveries: 2,
      lease: { fence: 2, owner: 'owner-b' },
    });
  });

  it('respects maxBatchMessages and maxBatchTokens, splitting only between messages', async () => {
    const { queue } = await f.make({ maxBatchMessages: 3, maxBatchTokens: 10, countTokens: (b) => b.length });
    await enqueueAll(queue, 'th', ['aaaa', 'bbbb', 'cc', 'd', 'e']);
    expect(ids(batchOf(await claimNow(queue, 'th')))).toEqual(['m1', 'm2', 'm3']);

    const { queue: tokens } = await f.make({
      maxBatchMessages: 10,
      maxBatchTokens: 10,
      countTokens: (b) => b.length,
    });
    await enqueueAll(tokens, 'th', ['aaaa', 'bbbbbb', 'c']);
    expect(ids(batchOf(await claimNow(tokens, 'th')))).toEqual(['m1', 'm2']);
  });

  it('takes a token count the caller supplies instead of counting the body', async () => {
    const { queue } = await f.make({ maxBatchTokens: 10, countTokens: () => 1 });
    await queue.intake.enqueue('th', { id: 'm1', body: 'x', tokens: 8 });
    await queue.intake.enqueue('th', { id: 'm2', body: 'y', tokens: 8 });
    const batch = batchOf(await claimNow(queue, 'th'));
    expect(batch.messages.map((m) => [m.id, m.tokens])).toEqual([['m1', 8]]);
  });

  it('sends an oversized message alone and whole', async () => {
    const { queue } = await f.make({ maxBatchTokens: 10, countTokens: (b) => b.length });
    const big = 'x'.repeat(50);
    await enqueueAll(queue, 'th', [big, 'small']);
    const batch = batchOf(await claimNow(queue, 'th'));
    expect(ids(batch)).toEqual(['m1']);
    expect(batch.messages[0]!.body).toBe(big);
  });

  it('types batches by origin', async () => {
    const { queue } = await f.make();
    await queue.intake.enqueue('bots', { id: 'b1', body: 'x', origin: 'agent' });
    await queue.intake.enqueue('sys', { id: 's1', body: 'x', origin: 'system' });
    await queue.intake.enqueue('mixed', { id: 'b1', body: 'x', origin: 'agent' });
    await queue.intake.enqueue('mixed', { id: 'u1', body: 'x', origin: 'user' });
    expect(batchOf(await claimNow(queue, 'bots')).type).toBe('AgentToAgent');
    expect(batchOf(await claimNow(queue, 'sys')).type).toBe('SystemTrigger');
    expect(batchOf(await claimNow(queue, 'mixed')).type).toBe('UserRequest');
  });

  it('goes idle when everything waiting was dropped before the claim', async () => {
    const { queue } = await f.make();
    await enqueueAll(queue, 'th', ['a']);
    await new ThreadControls(f.redis, (thread) => keysOf(queue, thread), queue.config).cancelAll('th');
    expect(await claimNow(queue, 'th')).toEqual({ kind: 'empty' });
    expect((await queue.admin.state('th')).status).toBe('idle');
    expect((await queue.intake.enqueue('th', { id: 'n', body: 'again' })).outcome).toBe('accepted');
    expect((await queue.admin.state('th')).status).toBe('scheduled');
  });
});
