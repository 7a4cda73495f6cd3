import { deletePrefix, type RedisHandle, startRedis, uniquePrefix } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisClient } from '../src/connections.js';
import { Store } from '../src/store.js';
import { claimNow } from './fixture.js';

let server: RedisHandle;
let store: Store;
beforeAll(async () => {
  server = await startRedis();
  store = Store.open({
    url: server.url,
    connection: { kind: 'patient' },
    queue: { prefix: uniquePrefix('classes'), buckets: 4, maxFailures: 1 },
  });
});
afterAll(async () => {
  await deletePrefix((store as unknown as { redis: RedisClient }).redis, store.config.prefix);
  await store.close();
  await server.stop();
});

async function deadLetter(thread: string, reason: string): Promise<void> {
  await store.queue.intake.enqueue(thread, { id: `m-${thread}`, body: 'poison' });
  const claim = await claimNow(store.queue, thread);
  if (claim.kind !== 'batch') throw new Error(`no batch: ${claim.kind}`);
  await store.queue.turns.fail(claim.batch.lease, reason);
}

const CRASH = 'agent process <n> exited with code <n>; stderr tail';

describe('dead letters grouped by reason class', () => {
  it('groups failures of one cause whatever pids, numbers, ids, paths, URLs and stderr tails they name', async () => {
    for (let i = 0; i < 12; i++) {
      await deadLetter(
        `crash-${i}`,
        `agent process ${4000 + i} exited with code ${i % 3}; stderr tail:\nTypeError at /srv/agent/run-${i}.js:${i}\n  at main (node:internal/${i})`,
      );
    }
    await deadLetter('rejected-1', 'agent rejected session/prompt: Internal error (code -32603)');
    await deadLetter('rejected-2', 'agent rejected session/prompt: Internal error (code -32000)');
    await deadLetter('fetch', 'attachment https://files.example/a/7f3e.png?sig=x9 could not be fetched');
    await deadLetter('path', 'cannot open ~/work/thread-88/notes.md: ENOENT');
    await deadLetter(
      'cancel',
      'turn on thread slack:T1:C0123:1712345678.000100 (session 5b1c-9f) did not end within 5000 ms of session/cancel; agent process killed',
    );

    const summary = await store.listing.summary();
    expect(summary.deadLetters).toBe(17);
    expect(summary.deadLetterReasons).toEqual([
      { reason: CRASH, count: 12 },
      { reason: 'agent rejected session/prompt: Internal error (code <n>)', count: 2 },
      { reason: 'attachment <url> could not be fetched', count: 1 },
      { reason: 'cannot open <path>: ENOENT', count: 1 },
      {
        reason:
          'turn on thread <id> (session <id>) did not end within <n> ms of session/cancel; agent process killed',
        count: 1,
      },
    ]);
  });

  it('lists a class by its name, each dead letter keeping its whole reason beside it', async () => {
    const page = await store.listing.deadLetters(undefined, 50, CRASH);
    expect(page.items).toHaveLength(12);
    for (const row of page.items) {
      expect(row.reasonClass).toBe(CRASH);
      expect(row.reason).toMatch(/^agent process \d+ exited with code \d; stderr tail:\nTypeError at \/srv/);
    }
    expect((await store.listing.deadLetters(undefined, 50, 'agent process')).items).toEqual([]);
  });
});
