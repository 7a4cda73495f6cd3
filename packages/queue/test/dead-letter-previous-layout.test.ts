import { silentLogger } from '@tributary/observability';
import { deletePrefix, type RedisHandle, startRedis, uniquePrefix } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisClient } from '../src/connections.js';
import { DeadRetention } from '../src/dead-retention.js';
import { Store } from '../src/store.js';
import { keysOf } from '../src/testing.js';

let server: RedisHandle;
let store: Store;
let redis: RedisClient;
beforeAll(async () => {
  server = await startRedis();
  store = Store.open({
    url: server.url,
    connection: { kind: 'patient' },
    queue: { prefix: uniquePrefix('legacy'), buckets: 1, maxFailures: 1 },
  });
  redis = (store as unknown as { redis: RedisClient }).redis;
});
afterAll(async () => {
  await deletePrefix(redis, store.config.prefix);
  await store.close();
  await server.stop();
});

let batches = 0;

/**
 * A dead letter as the previous release wrote it: a JSON record in the thread's own list, its item in
 * the bucket's index and its raw reason counted in the bucket's reason counts.
 */
async function oldDeadLetter(thread: string, pid: number): Promise<string> {
  const k = keysOf(store.queue, thread);
  const batchId = `0000000${++batches}000000`;
  const reason = `agent process ${pid} exited with code 1`;
  const deadAt = Date.now();
  const message = { sid: `${deadAt}-0`, seq: 1, id: `m-${batches}`, tok: 1, origin: 'user', at: deadAt };
  await redis.rpush(
    k.dead,
    JSON.stringify({
      batchId,
      thread,
      reason,
      deadAt,
      deliveries: 1,
      failures: 1,
      messages: [{ ...message, body: `poison ${batches}`, lane: '' }],
    }),
  );
  await redis.zadd(k.deadindex, deadAt, `${k.member}/${batchId}`);
  await redis.hincrby(k.deadreasons, reason, 1);
  return batchId;
}

async function oldDeadReply(thread: string, id: string): Promise<void> {
  const k = keysOf(store.queue, thread);
  const deadAt = Date.now();
  const reply = { id, payload: '{"text":"hi"}', at: deadAt, attempts: 3 };
  await redis.rpush(
    k.deadReplies,
    JSON.stringify({
      ...reply,
      lastError: 'HTTP 502 from 10.0.0.7',
      reason: 'HTTP 502 from 10.0.0.7',
      deadAt,
    }),
  );
  await redis.zadd(k.deadreplyindex, deadAt, `${k.member}/${id}`);
  await redis.hincrby(k.deadreplyreasons, 'HTTP 502 from 10.0.0.7', 1);
}

const CRASH = 'agent process <n> exited with code <n>';

describe('dead letters and dead replies written by the previous layout', () => {
  it('are counted by class, listed, shown in their thread, re-driven and discarded after an upgrade', async () => {
    const listed = [await oldDeadLetter('listed', 11), await oldDeadLetter('listed', 12)];
    const [redriven] = [await oldDeadLetter('redriven', 13)];
    const discarded = await oldDeadLetter('discarded', 14);
    await oldDeadLetter('reported', 15);
    await oldDeadReply('replied', 'r-1');

    // The overview counts them by class before anything has moved them.
    expect(await store.listing.summary()).toMatchObject({
      deadLetters: 5,
      deadLetterReasons: [{ reason: CRASH, count: 5 }],
      deadReplies: 1,
      deadReplyReasons: [{ reason: 'HTTP <n> from <id>', count: 1 }],
    });

    // Read, they move into the bucket's set, whole.
    const page = await store.listing.deadLetters(undefined, 10, CRASH);
    expect(page.items.map((row) => row.batchId).sort()).toEqual(
      [...listed, redriven, discarded, (await store.queue.admin.deadLetters('reported'))[0]!.batchId].sort(),
    );
    expect(page.items.every((row) => row.messages === 1 && row.reasonClass === CRASH)).toBe(true);
    expect(await redis.exists(keysOf(store.queue, 'listed').dead)).toBe(0);
    expect((await store.admin.report('listed'))?.deadLetters.map((d) => d.batchId)).toEqual(listed);

    expect(await store.admin.redrive('redriven', redriven!)).toBe(1);
    expect(await store.admin.discard('discarded', discarded)).toBe(1);
    expect(await store.listing.summary()).toMatchObject({
      deadLetters: 3,
      deadLetterReasons: [{ reason: CRASH, count: 3 }],
    });
    // Nothing is counted twice: the raw reasons moved with their dead letters.
    expect(await redis.hlen(keysOf(store.queue, 'listed').deadreasons)).toBe(0);

    expect(await store.admin.known('replied')).toBe(true);
    expect(await store.admin.discardReply('replied', 'r-1')).toBe(true);
    expect(await store.listing.summary()).toMatchObject({ deadReplies: 0, deadReplyReasons: [] });
  });

  it('that no one reads are moved by the first trim of a worker, so the caps count them', async () => {
    await oldDeadLetter('untouched', 21);
    const k = keysOf(store.queue, 'untouched');
    await new DeadRetention(store.queue.config, redis, silentLogger).runOnce();
    expect(await redis.exists(k.dead)).toBe(0);
    expect(
      await redis.hget(
        k.deadclassof,
        `${k.member}/${(await store.queue.admin.deadLetters('untouched'))[0]!.batchId}`,
      ),
    ).toBe(CRASH);
  });
});
