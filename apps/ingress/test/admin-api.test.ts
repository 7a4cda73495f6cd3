import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_FAILED_AUTH_PER_MINUTE } from '../src/admin-routes.js';
import {
  gatewayEvent,
  hmacHeaders,
  type IngressHarness,
  SECRETS,
  startIngressHarness,
} from './ingress-fixture.js';

const TOKEN = 'admin-token-for-the-tests-0123456789';
let h: IngressHarness;
beforeAll(async () => {
  h = await startIngressHarness({
    env: { ADMIN_TOKEN: TOKEN, ALLOWED_USERS: 'u-ada,u-bob', MAX_THREAD_BACKLOG: '2' },
  });
});
afterAll(() => h.close());

const admin = (path: string, method = 'GET', token = TOKEN) =>
  fetch(`${h.url}/admin${path}`, { method, headers: { authorization: `Bearer ${token}` } });

describe('admin API', () => {
  it('refuses requests without the bearer token', async () => {
    const answer = await admin('/dead-letters', 'GET', 'wrong-token-of-the-same-sort-0000');
    expect(answer.status).toBe(401);
    expect(await answer.json()).toMatchObject({ code: 'unauthorized' });
    expect((await fetch(`${h.url}/admin/dead-letters`)).status).toBe(401);
  });

  it('answers 429 once an address has sent too many wrong tokens in a minute; the right token still works', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 300; i++) {
      statuses.push((await admin('/dead-letters', 'GET', `guess-${i}-of-the-same-length-00000`)).status);
    }
    // 401 until the address's budget is spent (the first test's refusals spent some), then 429 only.
    const first429 = statuses.indexOf(429);
    expect(first429).toBeGreaterThan(0);
    expect(first429).toBeLessThanOrEqual(ADMIN_FAILED_AUTH_PER_MINUTE);
    expect(statuses.slice(0, first429).every((status) => status === 401)).toBe(true);
    expect(statuses.slice(first429).every((status) => status === 429)).toBe(true);
    const refused = await admin('/dead-letters', 'GET', 'one-more-guess-of-the-same-length0');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await refused.json()).toMatchObject({ code: 'rate_limited' });
    expect((await admin('/dead-letters')).status).toBe(200);
  });

  it('shows a thread and drops its waiting messages on cancel-all', async () => {
    for (const text of ['one', 'two']) {
      const body = gatewayEvent(text);
      expect(
        (await h.post('/webhooks/gateway', body, hmacHeaders(SECRETS.GATEWAY_SECRET, body))).status,
      ).toBe(200);
    }
    // gatewayEvent's thread: upstream platform telegram, channel dev, thread T1.
    const thread = encodeURIComponent('gateway:telegram:dev:T1');
    const shown = await (await admin(`/threads/${thread}`)).json();
    expect(shown).toMatchObject({
      thread: 'gateway:telegram:dev:T1',
      state: { status: 'scheduled', backlog: 2 },
    });

    const cancelled = (await (await admin(`/threads/${thread}/cancel-all`, 'POST')).json()) as {
      result: string;
    };
    expect(cancelled).toMatchObject({ ok: true, command: 'cancel-all' });
    expect(cancelled.result).toContain('dropped 2 waiting messages');
    expect(await h.queuedCount()).toBe(0);
  });

  it('answers 404 for an unknown command or dead letter', async () => {
    expect((await admin('/threads/t/explode', 'POST')).status).toBe(404);
    expect((await admin('/threads/t/dead-letters/0000000000000000/redrive', 'POST')).status).toBe(404);
    expect(await (await admin('/dead-letters')).json()).toEqual({ threads: [] });
  });

  it('answers for a message where it went: queued, refused by a gate, refused over the backlog cap', async () => {
    const thread = 'gateway:telegram:dev:T9';
    const post = async (messageId: string, sender: object) => {
      const body = gatewayEvent(messageId, {
        message_id: messageId,
        channel: { id: 'dev', type: 'group', thread_id: 'T9' },
        sender,
      });
      return h.post('/webhooks/gateway', body, hmacHeaders(SECRETS.GATEWAY_SECRET, body));
    };
    const ada = { id: 'u-ada', name: 'ada', display_name: 'Ada', is_bot: false };
    const eve = { id: 'u-eve', name: 'eve', display_name: 'Eve', is_bot: false };
    expect((await post('g-1', ada)).body).toMatchObject({ outcome: 'accepted' });
    expect((await post('g-2', eve)).body).toMatchObject({ outcome: 'ignored', reason: 'user-not-allowed' });
    expect((await post('g-3', ada)).body).toMatchObject({ outcome: 'accepted' });
    expect((await post('g-4', ada)).status).toBe(429);

    const receipt = async (messageId: string) => {
      const answer = await admin(`/threads/${encodeURIComponent(thread)}/messages/${messageId}`);
      return { status: answer.status, body: await answer.json() };
    };
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
  });
});
