import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
  h = await startIngressHarness({ env: { ADMIN_TOKEN: TOKEN } });
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
});
