import { redisClockReaches, redisTime, waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BacklogFullError } from '../src/errors.js';
import { ThreadControls } from '../src/stores/thread-controls.js';
import { keysOf } from '../src/testing.js';
import { dedupMember } from '../src/thread-keys.js';
import { type QueueFixture, queueFixture } from './fixture.js';

let f: QueueFixture;
beforeAll(async () => {
  f = await queueFixture();
});
afterAll(() => f.close());

describe('enqueue', () => {
  it('rings an idle thread once and queues behind a scheduled one', async () => {
    const { queue, doorbell } = await f.make();
    const first = await queue.intake.enqueue('th', { id: 'a', body: 'one' });
    const second = await queue.intake.enqueue('th', { id: 'b', body: 'two' });
    expect(first).toMatchObject({ outcome: 'accepted', seq: 1, rang: true });
    expect(second).toMatchObject({ outcome: 'accepted', seq: 2, rang: false });
    // A new thread prefers no worker: its one doorbell is a job of the shared queue, for any worker.
    expect(await doorbell.jobCounts()).toMatchObject({ waiting: 1, delayed: 0 });
    expect(await doorbell.pending(keysOf(queue, 'th').member, 1)).toBe(true);
    expect(await queue.admin.state('th')).toMatchObject({ status: 'scheduled', epoch: 1, backlog: 2 });
  });

  it('records, with each acceptance, that we are involved and how many agent messages came in a row', async () => {
    const { queue } = await f.make();
    const gate = () => f.redis.hgetall(keysOf(queue, 'th').gate);
    await queue.intake.enqueue('th', { id: 'a', body: 'from a bot', origin: 'agent' });
    await queue.intake.enqueue('th', { id: 'b', body: 'from a bot', origin: 'agent' });
    expect(await gate()).toEqual({ involved: '1', botTurns: '2' });
    await queue.intake.enqueue('th', { id: 'b', body: 'a retry', origin: 'agent' });
    expect((await gate()).botTurns).toBe('2');
    await queue.intake.enqueue('th', { id: 'c', body: 'from a person', origin: 'user' });
    expect(await gate()).toEqual({ involved: '1', botTurns: '0' });
    // Kept while the thread holds messages; it expires with the thread's other keys (idle-expiry).
    expect(await f.redis.pttl(keysOf(queue, 'th').gate)).toBe(-1);
  });

  it('checks the gate conditions on that state in the same script, and refuses without a trace', async () => {
    const { queue, doorbell } = await f.make();
    const involved = { requireInvolved: true };
    expect(await queue.intake.enqueue('th', { id: 'a', body: 'hi', gate: involved })).toEqual({
      outcome: 'gated',
      refusal: 'not-addressed',
    });
    expect(await f.redis.exists(keysOf(queue, 'th').gate, keysOf(queue, 'th').inbox)).toBe(0);
    expect(await (await doorbell.queueOf('th')).getJobCounts('waiting')).toMatchObject({ waiting: 0 });
    await queue.intake.enqueue('th', { id: 'b', body: 'mentions us' });
    expect((await queue.intake.enqueue('th', { id: 'a', body: 'hi', gate: involved })).outcome).toBe(
      'accepted',
    );

    const bots = { requireInvolved: false, maxBotTurns: 2 };
    await queue.intake.enqueue('th', { id: 'c', body: 'bot 1', origin: 'agent', gate: bots });
    const last = await queue.intake.enqueue('th', { id: 'd', body: 'bot 2', origin: 'agent', gate: bots });
    expect(await queue.intake.enqueue('th', { id: 'e', body: 'bot 3', origin: 'agent', gate: bots })).toEqual(
      {
        outcome: 'gated',
        refusal: 'bot-turn-limit',
      },
    );
    // A platform's retry of the last message the limit allowed is that message, not one over the limit.
    if (last.outcome !== 'accepted') throw new Error('the last allowed agent message was not accepted');
    expect(await queue.intake.enqueue('th', { id: 'd', body: 'bot 2', origin: 'agent', gate: bots })).toEqual(
      {
        outcome: 'duplicate',
        streamId: last.streamId,
      },
    );
    expect((await queue.admin.state('th')).backlog).toBe(4);
    await queue.intake.enqueue('th', { id: 'f', body: 'a person', gate: involved });
    expect(
      (await queue.intake.enqueue('th', { id: 'e', body: 'bot 3', origin: 'agent', gate: bots })).outcome,
    ).toBe('accepted');
  });

  it('absorbs a retry with the same idempotency key', async () => {
    const { queue } = await f.make();
    const first = await queue.intake.enqueue('th', { id: 'a', body: 'one' });
    const retry = await queue.intake.enqueue('th', { id: 'a', body: 'one' });
    const other = await queue.intake.enqueue('th', { id: 'a2', idempotencyKey: 'slack:C1:1.000', body: 'x' });
    const otherRetry = await queue.intake.enqueue('th', {
      id: 'a3',
      idempotencyKey: 'slack:C1:1.000',
      body: 'x',
    });
    if (first.outcome !== 'accepted' || other.outcome !== 'accepted') throw new Error('not accepted');
    expect(retry).toEqual({ outcome: 'duplicate', streamId: first.streamId });
    expect(otherRetry).toEqual({ outcome: 'duplicate', streamId: other.streamId });
    expect((await queue.admin.state('th')).backlog).toBe(2);
  });

  it('forgets an idempotency key after its TTL', async () => {
    const { queue } = await f.make({ dedupTtlMs: 50 });
    await queue.intake.enqueue('th', { id: 'a', body: 'one' });
    const k = keysOf(queue, 'th');
    expect(await f.redis.hkeys(k.dedup)).toEqual([dedupMember('th', 'a')]);
    await waitFor(async () => (await f.redis.exists(k.dedup, k.dedupUntil)) === 0, {
      what: 'the dedup index to expire',
    });
    expect((await queue.intake.enqueue('th', { id: 'a', body: 'one' })).outcome).toBe('accepted');
  });

  it('forgets each idempotency key on its own while the thread keeps one index of them', async () => {
    const WINDOW_MS = 1_000;
    const { queue } = await f.make({ dedupTtlMs: WINDOW_MS });
    const k = keysOf(queue, 'th');
    const first = await queue.intake.enqueue('th', { id: 'a', body: 'one' });
    const acceptedAt = await redisTime(f.redis);
    await redisClockReaches(f.redis, acceptedAt + WINDOW_MS / 2, { what: 'half the window' });
    const second = await queue.intake.enqueue('th', { id: 'b', body: 'two' });
    // Past a's window and within b's: b's write kept the index alive, a is expired but still in it.
    await redisClockReaches(f.redis, acceptedAt + WINDOW_MS + 1, { what: "a's window" });
    expect(await f.redis.hlen(k.dedup)).toBe(2);
    const again = await queue.intake.enqueue('th', { id: 'a', body: 'one' });
    expect(again).toMatchObject({ outcome: 'accepted' });
    if (first.outcome !== 'accepted' || second.outcome !== 'accepted' || again.outcome !== 'accepted') {
      throw new Error('not accepted');
    }
    expect(again.streamId).not.toBe(first.streamId);
    expect(await queue.intake.enqueue('th', { id: 'b', body: 'two' })).toEqual({
      outcome: 'duplicate',
      streamId: second.streamId,
    });
    expect(await queue.intake.enqueue('th', { id: 'a', body: 'one' })).toEqual({
      outcome: 'duplicate',
      streamId: again.streamId,
    });
    expect((await f.redis.hgetall(k.dedup))[dedupMember('th', 'a')]).toBe(again.streamId);
    expect(await f.redis.zcard(k.dedupUntil)).toBe(2);
    // The index lives as long as its latest key: no longer than the window.
    expect(await f.redis.pttl(k.dedup)).toBeLessThanOrEqual(WINDOW_MS);
    expect(await f.redis.pttl(k.dedupUntil)).toBeLessThanOrEqual(WINDOW_MS);
  });

  it('trims expired idempotency keys from the index as it writes', async () => {
    const WINDOW_MS = 600;
    const { queue } = await f.make({ dedupTtlMs: WINDOW_MS });
    const k = keysOf(queue, 'th');
    for (const id of ['a', 'b', 'c']) await queue.intake.enqueue('th', { id, body: id });
    const writtenAt = await redisTime(f.redis);
    await redisClockReaches(f.redis, writtenAt + WINDOW_MS / 2, { what: 'half the window' });
    await queue.intake.enqueue('th', { id: 'd', body: 'd' });
    await redisClockReaches(f.redis, writtenAt + WINDOW_MS + 1, { what: "the first keys' window" });
    await queue.intake.enqueue('th', { id: 'e', body: 'e' });
    expect((await f.redis.hkeys(k.dedup)).sort()).toEqual([dedupMember('th', 'd'), dedupMember('th', 'e')]);
    expect((await f.redis.zrange(k.dedupUntil, 0, -1)).sort()).toEqual([
      dedupMember('th', 'd'),
      dedupMember('th', 'e'),
    ]);
  });

  it('refuses past the backlog cap with a typed error and leaves no trace', async () => {
    const { queue } = await f.make({ maxBacklog: 2 });
    await queue.intake.enqueue('th', { id: 'a', body: '1' });
    await queue.intake.enqueue('th', { id: 'b', body: '2' });
    const refused = queue.intake.enqueue('th', { id: 'c', body: '3' });
    await expect(refused).rejects.toBeInstanceOf(BacklogFullError);
    await expect(refused).rejects.toMatchObject({ code: 'BACKLOG_FULL', backlog: 2 });
    expect((await queue.admin.state('th')).backlog).toBe(2);
    // Refused means not remembered: the platform's retry is accepted once there is room.
    await new ThreadControls(f.redis, (thread) => keysOf(queue, thread), queue.config).cancelAll('th');
    expect((await queue.intake.enqueue('th', { id: 'c', body: '3' })).outcome).toBe('accepted');
  });

  it('keeps threads whose ids differ only in separators apart', async () => {
    const { queue } = await f.make();
    await queue.intake.enqueue('a:b', { id: 'm', body: 'x' });
    await queue.intake.enqueue('a%3Ab', { id: 'm', body: 'y' });
    expect((await queue.admin.state('a:b')).backlog).toBe(1);
    expect((await queue.admin.state('a%3Ab')).backlog).toBe(1);
  });
});
