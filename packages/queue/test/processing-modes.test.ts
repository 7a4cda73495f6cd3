import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Batch } from '../src/batch.js';
import type { ProcessingMode, ThreadBatching } from '../src/queue-config.js';
import type { ThreadQueue } from '../src/threads/thread-queue.js';
import { claimNow, done, type QueueFixture, queueFixture } from './fixture.js';

let f: QueueFixture;
beforeAll(async () => {
  f = await queueFixture();
});
afterAll(() => f.close());

const modes: Record<string, ProcessingMode> = { lane: 'per-lane', one: 'per-message' };
const batching = (thread: string): ThreadBatching => ({ mode: modes[thread.split(':')[0]!] ?? 'per-thread' });

/** Enqueues `senders` in order (message i from sender senders[i]) and returns every batch, in order. */
async function batches(queue: ThreadQueue, thread: string, senders: string[]): Promise<string[][]> {
  for (const [i, sender] of senders.entries()) {
    await queue.intake.enqueue(thread, { id: `${sender}${i + 1}`, body: 'x', lane: sender });
  }
  const claim = await claimNow(queue, thread);
  if (claim.kind !== 'batch') throw new Error('no batch');
  const result: string[][] = [];
  let batch: Batch = claim.batch;
  for (;;) {
    result.push(batch.messages.map((m) => m.id));
    const next = await queue.turns.commit(batch.lease, done);
    if (next.kind !== 'batch') return result;
    batch = next.batch;
  }
}

describe('processing modes', () => {
  it('per-lane ends a batch where the sender changes and keeps the thread’s order', async () => {
    const { queue } = await f.make({ batching });
    expect(await batches(queue, 'lane:C1', ['a', 'a', 'b', 'a', 'a', 'a'])).toEqual([
      ['a1', 'a2'],
      ['b3'],
      ['a4', 'a5', 'a6'],
    ]);
  });

  it('per-lane still applies the message cap within a lane', async () => {
    const { queue } = await f.make({ batching, maxBatchMessages: 2 });
    expect(await batches(queue, 'lane:C1', ['a', 'a', 'a', 'b'])).toEqual([['a1', 'a2'], ['a3'], ['b4']]);
  });

  it('per-lane keeps the lanes of a dead-lettered batch through a re-drive', async () => {
    const { queue } = await f.make({ batching, maxFailures: 1 });
    await queue.intake.enqueue('lane:C1', { id: 'a1', body: 'x', lane: 'a' });
    const claim = await claimNow(queue, 'lane:C1');
    if (claim.kind !== 'batch') throw new Error('no batch');
    await queue.intake.enqueue('lane:C1', { id: 'b2', body: 'x', lane: 'b' });
    await queue.intake.enqueue('lane:C1', { id: 'b3', body: 'x', lane: 'b' });
    const next = await queue.turns.fail(claim.batch.lease, 'boom');
    if (next.kind !== 'batch') throw new Error(`expected the next batch, got ${next.kind}`);
    await queue.turns.fail(next.batch.lease, 'boom again', { splits: false });
    const dead = await queue.admin.deadLetters('lane:C1');
    expect(dead.map((d) => d.messages.map((m) => [m.id, m.lane]))).toEqual([
      [['a1', 'a']],
      [
        ['b2', 'b'],
        ['b3', 'b'],
      ],
    ]);

    for (const letter of dead) await queue.admin.redrive('lane:C1', letter.batchId);
    expect(await batches(queue, 'lane:C1', [])).toEqual([['a1'], ['b2', 'b3']]);
  });

  it("caps a thread's batches by its own caps where it has them, read as each batch is formed", async () => {
    const caps: Record<string, ThreadBatching> = {
      'two:C1': { mode: 'per-thread', maxMessages: 2 },
      'small:C1': { mode: 'per-thread', maxTokens: 1 },
    };
    const { queue } = await f.make({
      maxBatchMessages: 10,
      batching: async (thread) => caps[thread] ?? { mode: 'per-thread' },
    });
    expect(await batches(queue, 'two:C1', ['a', 'b', 'a', 'b', 'a'])).toEqual([
      ['a1', 'b2'],
      ['a3', 'b4'],
      ['a5'],
    ]);
    // Each message is one token: a cap of one takes them one at a time.
    expect(await batches(queue, 'small:C1', ['a', 'a'])).toEqual([['a1'], ['a2']]);
    expect(await batches(queue, 'other:C1', ['a', 'b', 'a'])).toEqual([['a1', 'b2', 'a3']]);
  });

  it('per-message runs one message per turn; per-thread batches across senders', async () => {
    const { queue } = await f.make({ batching });
    expect(await batches(queue, 'one:C1', ['a', 'a', 'b'])).toEqual([['a1'], ['a2'], ['b3']]);
    expect(await batches(queue, 'slack:C1', ['a', 'b', 'a'])).toEqual([['a1', 'b2', 'a3']]);
  });
});
