import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  discordForward,
  discordHeaders,
  gatewayEvent,
  hmacHeaders,
  type IngressHarness,
  SECRETS,
  slackHeaders,
  slackMessage,
  startIngressHarness,
  telegramHeaders,
  telegramUpdate,
} from './ingress-fixture.js';

let h: IngressHarness;
beforeAll(async () => {
  h = await startIngressHarness();
});
afterAll(() => h.close());

interface Route {
  name: string;
  path: string;
  body: () => string;
  sign: (body: string) => Record<string, string>;
  /** Ways a delivery can fail verification. */
  forgeries: [string, (body: string) => { body: string; headers: Record<string, string> }][];
}

const minutesAgo = (minutes: number) => Date.now() - minutes * 60_000;

const changedBody = (sign: Route['sign']) => (body: string) => ({
  body: body.replace('deploy', 'delete'),
  headers: sign(body),
});

const slack: Route = {
  name: 'slack',
  path: '/webhooks/slack',
  body: () => slackMessage('<@UBOT> deploy please'),
  sign: (body) => slackHeaders(body),
  forgeries: [
    ['changed body', changedBody((b) => slackHeaders(b))],
    ['stale timestamp', (body) => ({ body, headers: slackHeaders(body, Date.now() - 6 * 60_000) })],
    [
      'missing signature',
      (body) => ({ body, headers: { 'x-slack-request-timestamp': String(Math.floor(Date.now() / 1000)) } }),
    ],
    [
      'missing timestamp',
      (body) => ({ body, headers: { 'x-slack-signature': slackHeaders(body)['x-slack-signature']! } }),
    ],
    [
      'wrong secret',
      (body) => ({ body, headers: { ...slackHeaders(body), 'x-slack-signature': `v0=${'0'.repeat(64)}` } }),
    ],
  ],
};

const telegram: Route = {
  name: 'telegram',
  path: '/webhooks/telegram',
  body: () => telegramUpdate('@tributary_bot deploy please', Math.floor(Math.random() * 1e9)),
  sign: () => telegramHeaders(),
  forgeries: [
    ['missing token', (body) => ({ body, headers: {} })],
    ['wrong token', (body) => ({ body, headers: { 'x-telegram-bot-api-secret-token': 'nope' } })],
  ],
};

const gateway: Route = {
  name: 'gateway',
  path: '/webhooks/gateway',
  body: () => gatewayEvent('deploy please'),
  sign: (body) => hmacHeaders(SECRETS.GATEWAY_SECRET, body),
  forgeries: [
    ['changed body', changedBody((b) => hmacHeaders(SECRETS.GATEWAY_SECRET, b))],
    ['missing signature', (body) => ({ body, headers: {} })],
    ['wrong secret', (body) => ({ body, headers: hmacHeaders('another secret', body) })],
  ],
};

describe.each([slack, telegram, gateway])('$name webhook verification', (route) => {
  it('accepts a correctly signed delivery and queues it', async () => {
    const before = await h.queuedCount();
    const body = route.body();
    const answer = await h.post(route.path, body, route.sign(body));
    expect(answer.status).toBe(200);
    expect(answer.body.outcome).toBe('accepted');
    expect(await h.queuedCount()).toBe(before + 1);
  });

  it.each(route.forgeries)('refuses a delivery with a %s with 401 and queues nothing', async (_, forge) => {
    const before = await h.keyCount();
    const forged = forge(route.body());
    const answer = await h.post(route.path, forged.body, forged.headers);
    expect(answer.status).toBe(401);
    expect(answer.body).toMatchObject({ code: 'unauthorized' });
    expect(typeof answer.body.error).toBe('string');
    expect(await h.keyCount()).toBe(before);
  });
});

describe.each([
  { path: '/webhooks/gateway', secret: SECRETS.GATEWAY_SECRET, body: () => gatewayEvent('deploy please') },
  {
    path: '/webhooks/discord/forwarded',
    secret: SECRETS.DISCORD_FORWARDER_SECRET,
    body: () => discordForward('<@900> deploy please', String(Date.now()), '77'),
  },
])('replay window of $path', ({ path, secret, body }) => {
  it.each([
    ['replayed six minutes after it was signed', 6],
    ['stamped six minutes in the future', -6],
    ['stamped in 2001', (Date.now() - Date.UTC(2001, 0, 1)) / 60_000],
  ])('refuses a correctly signed request %s with 401 and queues nothing', async (_, age) => {
    const before = await h.keyCount();
    const captured = body();
    const answer = await h.post(path, captured, hmacHeaders(secret, captured, minutesAgo(age)));
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual({
      code: 'unauthorized',
      error: 'x-tributary-timestamp is more than 300 s away from now',
    });
    expect(await h.keyCount()).toBe(before);
  });

  it('names the header and the window when the timestamp is missing', async () => {
    const captured = body();
    const { 'x-tributary-signature': signature } = hmacHeaders(secret, captured);
    const answer = await h.post(path, captured, { 'x-tributary-signature': signature! });
    expect(answer.status).toBe(401);
    expect(answer.body.error).toBe('missing x-tributary-timestamp header (unix seconds within 300 s of now)');
  });

  it('accepts the same request signed four minutes ago', async () => {
    const delivered = body();
    const answer = await h.post(path, delivered, hmacHeaders(secret, delivered, minutesAgo(4)));
    expect(answer.status).toBe(200);
    expect(answer.body.outcome).toBe('accepted');
  });
});

describe('discord interactions verification', () => {
  const ping = JSON.stringify({ type: 1, id: 'i1', application_id: 'a1', token: 't', version: 1 });

  it('answers a signed PING with PONG', async () => {
    const answer = await h.post('/webhooks/discord', ping, discordHeaders(h.discordKey, ping));
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ type: 1 });
  });

  it.each([
    [
      'changed body',
      () => ({ body: ping.replace('"i1"', '"i2"'), headers: discordHeaders(h.discordKey, ping) }),
    ],
    [
      'stale timestamp',
      () => ({ body: ping, headers: discordHeaders(h.discordKey, ping, Date.now() - 6 * 60_000) }),
    ],
    [
      'missing signature',
      () => ({ body: ping, headers: { 'x-signature-timestamp': String(Math.floor(Date.now() / 1000)) } }),
    ],
    [
      'bad signature',
      () => ({
        body: ping,
        headers: { ...discordHeaders(h.discordKey, ping), 'x-signature-ed25519': 'ab'.repeat(64) },
      }),
    ],
  ])('refuses a %s with 401', async (_, forge) => {
    const before = await h.keyCount();
    const forged = forge();
    const answer = await h.post('/webhooks/discord', forged.body, forged.headers);
    expect(answer.status).toBe(401);
    expect(await h.keyCount()).toBe(before);
  });
});

describe('routes and errors', () => {
  it('answers an unknown route with a JSON 404', async () => {
    const answer = await h.post('/webhooks/nowhere', '{}');
    expect(answer.status).toBe(404);
    expect(answer.body).toMatchObject({ code: 'not_found' });
  });

  it('refuses a body over the limit with 413 before verifying it', async () => {
    const body = JSON.stringify({ text: 'x'.repeat(2 * 1024 * 1024) });
    const answer = await h.post('/webhooks/gateway', body, hmacHeaders(SECRETS.GATEWAY_SECRET, body));
    expect(answer.status).toBe(413);
    expect(answer.body).toMatchObject({ code: 'body_too_large' });
  });

  it('answers a signed body that is not an event with 400 and queues nothing', async () => {
    const before = await h.keyCount();
    const body = JSON.stringify({ schema: 'openab.gateway.event.v1', event_id: 'e' });
    const answer = await h.post('/webhooks/gateway', body, hmacHeaders(SECRETS.GATEWAY_SECRET, body));
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: 'invalid_body' });
    expect(await h.keyCount()).toBe(before);
  });

  it('is live and ready, and exports ingress metrics', async () => {
    expect((await fetch(`${h.url}/livez`)).status).toBe(200);
    expect((await fetch(`${h.url}/readyz`)).status).toBe(200);
    const metrics = await (await fetch(`${h.adminUrl}/metrics`)).text();
    expect(metrics).toMatch(
      /tributary_ingress_requests_total\{platform="gateway",outcome="accepted"\} [1-9]/,
    );
    expect(metrics).toMatch(
      /tributary_ingress_requests_total\{platform="slack",outcome="unauthorized"\} [1-9]/,
    );
  });
});
