import { redisClockReaches, waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Batch } from '../src/batch.js';
import { Runner } from '../src/runner.js';
import { FinalTurnError, TurnAbortedError, type TurnHandler } from '../src/turn-loop.js';
import { done, noReplies, type QueueFixture, queueFixture } from './fixture.js';

let f: QueueFixture;
beforeAll(async () => {
  f = await queueFixture();
});
afterAll(() => f.close());

async function runner(overrides: Parameters<QueueFixture['make']>[0], handler: TurnHandler, concurrency = 2) {
  const { queue, doorbell } = await f.make(overrides);
  const r = new Runner({ queue, doorbell, connection: f.redis, handler, replies: noReplies, concurrency });
  await r.start();
  return { queue, doorbell, runner: r };
}

describe('turn runner', () => {
  it('runs the first message of an idle thread at once and drains the rest into one turn', async () => {
    const turns: string[][] = [];
    let release!: () => void;
    const firstTurnHeld = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { queue, runner: r } = await runner({}, async (batch) => {
      turns.push(batch.messages.map((m) => m.body));
      if (turns.length === 1) await firstTurnHeld;
      return done;
    });
    await queue.intake.enqueue('th', { id: 'm1', body: 'check the build' });
    await waitFor(() => turns.length === 1, { what: 'first turn' });
    for (const [i, body] of ['actually wait', 'check the build and run e2e', 'thanks'].entries()) {
      await queue.intake.enqueue('th', { id: `m${i + 2}`, body });
    }
    release();
    await waitFor(async () => (await queue.admin.state('th')).status === 'idle', { what: 'thread idle' });
    expect(turns).toEqual([['check the build'], ['actually wait', 'check the build and run e2e', 'thanks']]);
    await r.close();
  });

  it('keeps the lease alive through a turn longer than the lease', async () => {
    const fences: number[] = [];
    const leaseMs = 150;
    // A lapse would not go unseen: the runner's own sweeper would revive the thread within 20 ms and
    // the runner would claim it again under a second fence.
    const { queue, runner: r } = await runner({ leaseMs, sweepIntervalMs: 20 }, async (batch, signal) => {
      fences.push(batch.lease.fence);
      // The turn outlasts its first lease by a whole lease on Redis's clock: only renewals can keep it.
      await redisClockReaches(f.redis, batch.lease.expiresAt + leaseMs, { what: 'two leases to pass' });
      if (signal.aborted) throw signal.reason;
      return done;
    });
    await queue.intake.enqueue('th', { id: 'm1', body: 'long' });
    await waitFor(async () => (await queue.admin.history('th')).length === 1, { what: 'commit' });
    expect(fences).toEqual([1]);
    await r.close();
  });

  it('records a failing turn, retries it, and dead-letters it after maxFailures', async () => {
    let calls = 0;
    const { queue, runner: r } = await runner({ maxFailures: 2, retryDelayMs: 10 }, async () => {
      calls++;
      throw new Error('agent exploded');
    });
    await queue.intake.enqueue('th', { id: 'm1', body: 'x' });
    await waitFor(async () => (await queue.admin.deadLetters('th')).length === 1, { what: 'dead letter' });
    expect(calls).toBe(2);
    expect((await queue.admin.deadLetters('th'))[0]).toMatchObject({ reason: 'agent exploded' });
    await r.close();
  });

  it('hands running threads back on close; another runner re-delivers the same batch', async () => {
    const seen: Batch[] = [];
    const reasons: unknown[] = [];
    const {
      queue,
      doorbell,
      runner: first,
    } = await runner({}, async (batch, signal) => {
      seen.push(batch);
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      reasons.push(signal.reason);
      return done;
    });
    await queue.intake.enqueue('th', { id: 'm1', body: 'x' });
    await waitFor(() => seen.length === 1, { what: 'turn start' });
    await first.close();
    expect(reasons[0]).toBeInstanceOf(TurnAbortedError);
    expect(await queue.admin.state('th')).toMatchObject({ status: 'scheduled' });

    const delivered: Batch[] = [];
    const second = new Runner({
      queue,
      doorbell,
      connection: f.redis,
      replies: noReplies,
      handler: async (batch) => {
        delivered.push(batch);
        return done;
      },
    });
    await second.start();
    await waitFor(() => delivered.length === 1, { what: 're-delivery' });
    expect(delivered[0]).toMatchObject({ id: seen[0]!.id, type: 'Continuation', deliveries: 2 });
    await second.close();
  });
});

describe('final failures', () => {
  it('dead-letters at once when the handler says retrying cannot help', async () => {
    let calls = 0;
    const { queue, runner: r } = await runner({ maxFailures: 5, retryDelayMs: 10 }, async () => {
      calls++;
      throw new FinalTurnError('timed out');
    });
    await queue.intake.enqueue('th', { id: 'm1', body: 'x' });
    await waitFor(async () => (await queue.admin.deadLetters('th')).length === 1, { what: 'dead letter' });
    expect(calls).toBe(1);
    await r.close();
  });
});
