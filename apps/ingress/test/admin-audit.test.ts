import { Store } from '@tributary/queue';
import { keysOf } from '@tributary/queue/testing';
import { waitFor } from '@tributary/testkit';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type IngressHarness, startIngressHarness } from './ingress-fixture.js';

const ACT = 'audit-act-token-for-the-tests-01234';
const CLIENT = '203.0.113.7';
let h: IngressHarness;
let store: Store;
beforeAll(async () => {
  // One proxy in front: the client's address is the last X-Forwarded-For hop.
  h = await startIngressHarness({ env: { ADMIN_TOKENS: `ops:act:${ACT}`, TRUST_PROXY: '1' } });
  store = Store.open({
    url: h.server.url,
    connection: { kind: 'patient' },
    queue: { prefix: h.prefix, maxFailures: 1 },
  });
});
afterAll(async () => {
  await store.close();
  await h.close();
});

// biome-ignore lint/suspicious/noExplicitAny: the tests read whatever the API answered.
type Json = any;
async function admin(path: string, body?: object): Promise<{ status: number; body: Json }> {
  const response = await fetch(`${h.adminUrl}/admin${path}`, {
    method: body ? 'POST' : 'GET',
    headers: {
      authorization: `Bearer ${ACT}`,
      'x-forwarded-for': CLIENT,
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: response.status, body: await response.json() };
}

/** A dead letter of `thread` that died of `reason`; its batch id. */
async function deadLetter(thread: string, reason: string): Promise<string> {
  await store.queue.intake.enqueue(thread, { id: `m-${thread}-${Math.random()}`, body: 'poison' });
  const claim = await store.queue.turns.claim(
    thread,
    (await store.queue.admin.state(thread)).epoch,
    'worker',
  );
  if (claim.kind !== 'batch') throw new Error(`no batch: ${claim.kind}`);
  await store.queue.turns.fail(claim.batch.lease, reason);
  return claim.batch.id;
}

const latestEntry = async () => (await admin('/audit?limit=1')).body.items[0];

describe('the audit log', () => {
  it('writes each action before it is done and completes it after: who, from where, what, which items, how', async () => {
    const items: { thread: string; batchId: string }[] = [];
    for (const thread of ['w-1', 'w-2', 'w-3'])
      items.push({ thread, batchId: await deadLetter(thread, 'write order') });

    // Every command Redis runs, in order, while the action runs.
    const client = new Redis(h.server.url, { lazyConnect: true, enableReadyCheck: false });
    const monitor = await client.monitor();
    const seen: string[] = [];
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      seen.push(`${source === 'lua' ? 'lua ' : ''}${args[0]!.toLowerCase()} ${args[1] ?? ''}`);
    });
    const answer = await admin('/dead-letters/actions', { action: 'discard', reason: 'write order' });
    await store.queue.admin.state('marker');
    await waitFor(() => seen.some((line) => line.includes('marker')), { what: 'the monitor to catch up' });
    monitor.disconnect();
    client.disconnect();

    expect(answer).toMatchObject({ status: 200, body: { result: { done: 3, absent: 0 }, next: null } });
    const intent = seen.findIndex((line) => /^xadd .*\{audit\}:log$/.test(line));
    const acted = seen.findIndex((line) => /^lua hdel .*:deadletters:records$/.test(line));
    const completed = seen.findIndex((line) => /^lua hset .*\{audit\}:outcomes$/.test(line));
    expect(intent).toBeGreaterThanOrEqual(0);
    expect(acted).toBeGreaterThan(intent);
    expect(completed).toBeGreaterThan(seen.findLastIndex((line) => line.includes(':deadletters:records')));

    const entry = await latestEntry();
    expect(entry).toMatchObject({
      actor: 'ops',
      address: CLIENT,
      action: 'dead-letters.discard',
      target: { reason: 'write order' },
      outcome: 'ok',
      result: { done: 3, absent: 0 },
      at: expect.stringMatching(/Z$/),
      completedAt: expect.stringMatching(/Z$/),
    });
    expect([...entry.items].sort((a: Json, b: Json) => a.thread.localeCompare(b.thread))).toEqual(items);
  });

  it('records a refusal and an error as failed, and a bulk action an error stopped as partial, with its counts', async () => {
    const ids: string[] = [];
    for (const thread of ['p-1', 'p-2', 'p-3']) ids.push(await deadLetter(thread, 'partial'));
    expect((await admin('/threads/p-1/dead-letters/0000000000000000/discard', {})).status).toBe(404);
    expect(await latestEntry()).toMatchObject({
      action: 'dead-letters.discard',
      address: CLIENT,
      outcome: 'failed',
      result: { error: expect.stringContaining('no dead-letter') },
    });

    // A record Redis cannot decode makes the discard of p-2 fail.
    const k = keysOf(store.queue, 'p-2');
    await h.redis.hset(k.deadrecords, `${k.member}/${ids[1]}`, 'not a record');
    const items = ['p-1', 'p-2', 'p-3'].map((thread, i) => ({ thread, batchId: ids[i] }));
    expect((await admin('/dead-letters/actions', { action: 'discard', items })).status).toBe(500);
    expect(await latestEntry()).toMatchObject({
      action: 'dead-letters.discard',
      items,
      outcome: 'partial',
      result: { done: 1, absent: 0, failed: 1, skipped: 1, error: expect.any(String) },
    });
    expect(await store.queue.admin.deadLetters('p-3')).toHaveLength(1);

    expect((await admin(`/threads/p-2/dead-letters/${ids[1]}/discard`, {})).status).toBe(500);
    expect(await latestEntry()).toMatchObject({
      action: 'dead-letters.discard',
      target: { thread: 'p-2', batchId: ids[1] },
      outcome: 'failed',
      result: { error: expect.any(String) },
    });
    const logged = h.logs.filter((line) => line.msg === 'admin action failed');
    expect(logged.map((line) => line.outcome)).toEqual(['partial', 'failed']);
  });

  it('scans a bounded part of a list per bulk request and goes on from the cursor it answers', async () => {
    // The oldest two match; in front of them lies more than one request scans (a page of 1,000 read
    // in at most four rounds of index pages).
    for (const thread of ['needle-1', 'needle-2']) await deadLetter(thread, 'needle');
    const threads = Array.from({ length: 60 }, (_, i) => `hay-${i}`);
    await Promise.all(
      threads.map(async (thread) => {
        for (let i = 0; i < 70; i++) await deadLetter(thread, 'hay');
      }),
    );
    const first = await admin('/dead-letters/actions', { action: 'discard', reason: 'needle', dryRun: true });
    expect(first.body).toMatchObject({ matched: 0, truncated: true, next: expect.any(String) });
    const rest = await admin('/dead-letters/actions', {
      action: 'discard',
      reason: 'needle',
      cursor: first.body.next,
    });
    expect(rest.body).toMatchObject({ matched: 2, result: { done: 2, absent: 0 }, next: null });
    expect(await latestEntry()).toMatchObject({ outcome: 'ok', items: [{}, {}] });
    expect((await admin('/dead-letters/actions', { action: 'discard', items: [], cursor: 'x' })).status).toBe(
      400,
    );
    expect(
      (await admin('/dead-letters/actions', { action: 'discard', all: true, cursor: 'bogus' })).status,
    ).toBe(400);
  });
});
