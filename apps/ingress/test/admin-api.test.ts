import { FAILED_AUTH_PER_MINUTE } from '@tributary/platforms';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  gatewayEvent,
  hmacHeaders,
  type IngressHarness,
  SECRETS,
  startIngressHarness,
} from './ingress-fixture.js';

const ACT = 'admin-token-for-the-tests-0123456789';
const READ = 'read-only-token-for-the-tests-01234';
let h: IngressHarness;
beforeAll(async () => {
  h = await startIngressHarness({
    env: {
      ADMIN_TOKENS: `ops:act:${ACT},dashboards:read:${READ}`,
      ALLOWED_USERS: 'u-ada,u-bob',
      MAX_THREAD_BACKLOG: '2',
    },
  });
});
afterAll(() => h.close());

const admin = (path: string, method = 'GET', token = ACT, headers: Record<string, string> = {}) =>
  fetch(`${h.adminUrl}/admin${path}`, { method, headers: { authorization: `Bearer ${token}`, ...headers } });
// biome-ignore lint/suspicious/noExplicitAny: the tests read whatever the API answered.
type Json = any;
const json = async (response: Response) => ({
  status: response.status,
  body: (await response.json()) as Json,
});

async function postGateway(text: string, overrides: Record<string, unknown> = {}) {
  const body = gatewayEvent(text, overrides);
  return h.post('/webhooks/gateway', body, hmacHeaders(SECRETS.GATEWAY_SECRET, body));
}

describe('the admin listener', () => {
  it('is apart from the webhook port, which serves webhooks and health only', async () => {
    expect(new URL(h.adminUrl).port).not.toBe(new URL(h.url).port);
    expect(
      (await fetch(`${h.url}/admin/overview`, { headers: { authorization: `Bearer ${ACT}` } })).status,
    ).toBe(404);
    expect((await fetch(`${h.url}/metrics`)).status).toBe(404);
    expect((await fetch(`${h.url}/`)).status).toBe(404);
    expect((await fetch(`${h.url}/livez`)).status).toBe(200);
    expect((await fetch(`${h.adminUrl}/metrics`)).status).toBe(200);
    expect((await admin('/overview')).status).toBe(200);
  });

  it('serves the console under a strict content-security policy, without cookies', async () => {
    const page = await fetch(`${h.adminUrl}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.headers.get('content-security-policy')).not.toContain('unsafe-inline');
    expect(page.headers.get('set-cookie')).toBeNull();
    expect(await page.text()).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
  });
});

describe('admin tokens', () => {
  it('refuses requests without a known token', async () => {
    expect(await json(await admin('/overview', 'GET', 'wrong-token-of-the-same-sort-0000'))).toMatchObject({
      status: 401,
      body: { code: 'unauthorized' },
    });
    expect((await fetch(`${h.adminUrl}/admin/overview`)).status).toBe(401);
  });

  it('lets a read-only token read and refuses it every action', async () => {
    expect(await json(await admin('/whoami', 'GET', READ))).toEqual({
      status: 200,
      body: { name: 'dashboards', role: 'read' },
    });
    for (const path of ['/threads/t/pause', '/dead-letters/actions', '/workers/w/drain']) {
      expect(await json(await admin(path, 'POST', READ))).toMatchObject({
        status: 403,
        body: { code: 'forbidden' },
      });
    }
  });
});

describe('admin API', () => {
  it('answers 404 for an unknown thread and creates nothing for it', async () => {
    const before = await h.keyCount();
    expect((await admin('/threads/never-seen')).status).toBe(404);
    for (const action of ['pause', 'resume', 'reset', 'cancel', 'cancel-all']) {
      expect(await json(await admin(`/threads/never-seen/${action}`, 'POST'))).toMatchObject({
        status: 404,
        body: { code: 'not_found' },
      });
    }
    expect((await admin('/threads/t/explode', 'POST')).status).toBe(404);
    expect((await admin('/threads/t/dead-letters/0000000000000000/redrive', 'POST')).status).toBe(404);
    expect(await h.keyCount()).toBe(before);
  });

  it('shows a thread with ISO-8601 times and message bodies as JSON; cancel-all drops its waiting messages', async () => {
    for (const text of ['one', 'two']) expect((await postGateway(text)).status).toBe(200);
    // gatewayEvent's thread: upstream platform telegram, channel dev, thread T1.
    const thread = encodeURIComponent('gateway:telegram:dev:T1');
    const listed = await json(await admin('/threads?state=runnable'));
    expect(listed.body.items).toEqual([
      expect.objectContaining({
        thread: 'gateway:telegram:dev:T1',
        backlog: 2,
        since: expect.stringMatching(/Z$/),
      }),
    ]);
    const { body: shown } = await json(await admin(`/threads/${thread}`));
    expect(shown).toMatchObject({
      thread: 'gateway:telegram:dev:T1',
      state: { status: 'scheduled', backlog: 2 },
    });

    const cancelled = await json(await admin(`/threads/${thread}/cancel-all`, 'POST'));
    expect(cancelled.body).toMatchObject({
      ok: true,
      action: 'cancel-all',
      result: 'cancelled; dropped 2 waiting messages',
    });
    expect(await h.queuedCount()).toBe(0);
  });

  it('answers where a message went, with or without its thread', async () => {
    const thread = 'gateway:telegram:dev:T9';
    const post = (messageId: string, sender: object) =>
      postGateway(messageId, {
        message_id: messageId,
        channel: { id: 'dev', type: 'group', thread_id: 'T9' },
        sender,
      });
    const ada = { id: 'u-ada', name: 'ada', display_name: 'Ada', is_bot: false };
    const eve = { id: 'u-eve', name: 'eve', display_name: 'Eve', is_bot: false };
    expect((await post('g-1', ada)).body).toMatchObject({ outcome: 'accepted' });
    expect((await post('g-2', eve)).body).toMatchObject({ outcome: 'ignored', reason: 'user-not-allowed' });
    expect((await post('g-3', ada)).body).toMatchObject({ outcome: 'accepted' });
    expect((await post('g-4', ada)).status).toBe(429);

    const receipt = async (messageId: string) =>
      json(await admin(`/threads/${encodeURIComponent(thread)}/messages/${messageId}`));
    expect(await receipt('g-1')).toEqual({
      status: 200,
      body: { thread, messageId: 'g-1', status: 'queued' },
    });
    expect((await receipt('g-2')).body).toEqual({
      thread,
      messageId: 'g-2',
      status: 'refused',
      reason: 'user-not-allowed',
    });
    expect((await receipt('g-4')).body).toMatchObject({ status: 'refused', reason: 'backlog-full' });
    expect((await receipt('g-5')).status).toBe(404);

    expect(await json(await admin('/messages/g-4'))).toEqual({
      status: 200,
      body: {
        messageId: 'g-4',
        items: [{ thread, messageId: 'g-4', status: 'refused', reason: 'backlog-full' }],
      },
    });
    expect((await admin('/messages/g-5')).status).toBe(404);

    // Paused: still accepting and buffering, and the receipts say no turn starts.
    expect((await json(await admin(`/threads/${encodeURIComponent(thread)}/pause`, 'POST'))).status).toBe(
      200,
    );
    expect((await receipt('g-1')).body).toEqual({ thread, messageId: 'g-1', status: 'queued', paused: true });
    const paused = await json(await admin('/threads?state=paused'));
    expect(paused.body.items.map((row: { thread: string }) => row.thread)).toEqual([thread]);
  });

  it('does an action once per Idempotency-Key and records every action in the audit log', async () => {
    expect(
      (await postGateway('again', { channel: { id: 'dev', type: 'group', thread_id: 'T7' } })).status,
    ).toBe(200);
    const thread = encodeURIComponent('gateway:telegram:dev:T7');
    const reset = () =>
      admin(`/threads/${thread}/reset`, 'POST', ACT, { 'idempotency-key': 'reset-T7-once' });
    const first = await reset();
    const second = await reset();
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(await second.json()).toEqual(await first.json());
    const { body: report } = await json(await admin(`/threads/${thread}`));
    expect(report.state.generation).toBe(1);

    const { body: audit } = await json(await admin('/audit?limit=3'));
    expect(audit.items[0]).toMatchObject({
      actor: 'ops',
      action: 'threads.reset',
      target: { thread: 'gateway:telegram:dev:T7' },
      result: expect.stringContaining('reset'),
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
    });
    expect(audit.items.filter((e: { action: string }) => e.action === 'threads.reset')).toHaveLength(1);
    const logged = h.logs.filter(
      (l) =>
        l.msg === 'admin action' &&
        l.action === 'threads.reset' &&
        String(l.actor) === 'ops' &&
        JSON.stringify(l.target).includes('T7'),
    );
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ level: 30, actor: 'ops' });
    // A refused action is recorded with its error.
    await admin('/threads/never-seen/pause', 'POST');
    expect((await json(await admin('/audit?limit=1'))).body.items[0]).toMatchObject({
      action: 'threads.pause',
      result: { error: expect.stringContaining('never-seen') },
    });
  });

  it('refuses a cursor no page handed out and an unknown state', async () => {
    expect((await admin('/threads?cursor=bogus')).status).toBe(400);
    expect((await admin('/threads?state=sleeping')).status).toBe(400);
    expect((await admin('/audit?cursor=bogus')).status).toBe(400);
  });
});

// Last: it spends this address's budget of wrong tokens, which the tests above must not meet.
describe('guessing tokens', () => {
  it('answers 429 once an address has sent too many wrong tokens in a minute; the right token still works', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 300; i++) {
      statuses.push((await admin('/dead-letters', 'GET', `guess-${i}-of-the-same-length-00000`)).status);
    }
    // 401 until the address's budget is spent (the tests above spent some), then 429 only.
    const first429 = statuses.indexOf(429);
    expect(first429).toBeGreaterThan(0);
    expect(first429).toBeLessThanOrEqual(FAILED_AUTH_PER_MINUTE);
    expect(statuses.slice(0, first429).every((status) => status === 401)).toBe(true);
    expect(statuses.slice(first429).every((status) => status === 429)).toBe(true);
    const refused = await admin('/dead-letters', 'GET', 'one-more-guess-of-the-same-length0');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await refused.json()).toMatchObject({ code: 'rate_limited' });
    expect((await admin('/dead-letters')).status).toBe(200);
  });
});
