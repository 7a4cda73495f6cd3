import { Store } from '@tributary/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type IngressHarness, startIngressHarness } from './ingress-fixture.js';

const ACT = 'dead-letters-act-token-for-tests-012';
const PER_THREAD = 20;
let h: IngressHarness;
let store: Store;
beforeAll(async () => {
  h = await startIngressHarness({ env: { ADMIN_TOKENS: `ops:act:${ACT}` } });
  // The workers' side: what writes the dead letters, with its bounds.
  store = Store.open({
    url: h.server.url,
    connection: { kind: 'patient' },
    queue: { prefix: h.prefix, maxFailures: 1, deadMaxPerThread: PER_THREAD },
  });
});
afterAll(async () => {
  await store.close();
  await h.close();
});

// biome-ignore lint/suspicious/noExplicitAny: the tests read whatever the API answered.
type Json = any;
async function admin(path: string, body?: object): Promise<{ status: number; body: Json; bytes: number }> {
  const response = await fetch(`${h.adminUrl}/admin${path}`, {
    method: body ? 'POST' : 'GET',
    headers: { authorization: `Bearer ${ACT}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text), bytes: text.length };
}

/** `count` crashes of the agent on `thread`, each with its own pid, exit code and stderr tail. */
async function crashes(thread: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    await store.queue.intake.enqueue(thread, { id: `${thread}-${i}`, body: 'poison' });
    const claim = await store.queue.turns.claim(
      thread,
      (await store.queue.admin.state(thread)).epoch,
      'worker',
    );
    if (claim.kind !== 'batch') throw new Error(`no batch: ${claim.kind}`);
    const pid = 10_000 + Math.floor(Math.random() * 50_000);
    await store.queue.turns.fail(
      claim.batch.lease,
      `agent process ${pid} exited with code ${i % 7}; stderr tail:\nat /tmp/run-${pid}/agent.js:${i}`,
    );
  }
}

const CRASH = 'agent process <n> exited with code <n>; stderr tail';

describe('dead letters in the admin API', () => {
  it('groups crashes by class, bounds them per thread with the drop counted, and keeps pages within their limit', async () => {
    await crashes('slack:T1:C1:1', PER_THREAD + 5);
    for (let t = 0; t < 10; t++) await crashes(`slack:T1:C2:${t}`, 2);

    const overview = await admin('/overview');
    expect(overview.body.deadLetters).toEqual({
      total: PER_THREAD + 20,
      byReason: [{ reason: CRASH, count: PER_THREAD + 20 }],
      evicted: { ttl: 0, cap: 5 },
    });
    const metrics = await h.metrics();
    expect(metrics).toContain(`tributary_dead_items{kind="letters"} ${PER_THREAD + 20}`);
    expect(metrics).toContain('tributary_dead_evictions{kind="letters",cause="cap"} 5');

    const page = await admin('/dead-letters?limit=7');
    expect(page.body.items).toHaveLength(7);
    expect(page.body.groups).toEqual([{ reason: CRASH, count: PER_THREAD + 20 }]);
    expect(page.body.next).toEqual(expect.any(String));
    expect(page.body.items[0]).toMatchObject({
      reasonClass: CRASH,
      reason: expect.stringMatching(/^agent process \d+/),
    });

    // The same answer's size whatever the count: one group, a page's items.
    await crashes('slack:T1:C3:1', 15);
    const later = await admin('/dead-letters?limit=7');
    expect(later.body.total).toBe(PER_THREAD + 35);
    expect(Math.abs(later.bytes - page.bytes)).toBeLessThan(page.bytes / 10);

    const byClass = await admin(`/dead-letters?limit=500&reason=${encodeURIComponent(CRASH)}`);
    expect(byClass.body.items).toHaveLength(PER_THREAD + 35);
    const discarded = await admin('/dead-letters/actions', { action: 'discard', reason: CRASH });
    expect(discarded.body).toMatchObject({ result: { done: PER_THREAD + 35, absent: 0 }, next: null });
    expect((await admin('/overview')).body.deadLetters).toEqual({
      total: 0,
      byReason: [],
      evicted: { ttl: 0, cap: 5 },
    });
  });
});
