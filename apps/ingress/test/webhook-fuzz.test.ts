import fc from 'fast-check';
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
  h = await startIngressHarness({
    env: { RATE_LIMIT_PER_MINUTE: '1000000', ALLOW_USER_MESSAGES: 'mentions' },
  });
});
afterAll(() => h.close());

interface FuzzRoute {
  path: string;
  valid: () => string;
  sign: (body: string) => Record<string, string>;
}

const routes: Record<string, FuzzRoute> = {
  slack: { path: '/webhooks/slack', valid: () => slackMessage('<@UBOT> go'), sign: (b) => slackHeaders(b) },
  telegram: {
    path: '/webhooks/telegram',
    valid: () => telegramUpdate('@tributary_bot go', 7),
    sign: () => telegramHeaders(),
  },
  discord: {
    path: '/webhooks/discord',
    valid: () =>
      JSON.stringify({ type: 2, id: 'i', channel_id: 'c', data: { name: 'cancel' }, token: 't', version: 1 }),
    sign: (b) => discordHeaders(h.discordKey, b),
  },
  forwarded: {
    path: '/webhooks/discord/forwarded',
    valid: () => discordForward('<@900> go'),
    sign: (b) => hmacHeaders(SECRETS.DISCORD_FORWARDER_SECRET, b),
  },
  gateway: {
    path: '/webhooks/gateway',
    valid: () => gatewayEvent('go'),
    sign: (b) => hmacHeaders(SECRETS.GATEWAY_SECRET, b),
  },
};

/** A JSON value shaped like the valid body, with fields dropped, retyped or replaced. */
function mutated(valid: string): fc.Arbitrary<string> {
  const value = JSON.parse(valid) as Record<string, unknown>;
  const keys = Object.keys(value);
  return fc.oneof(
    fc.string({ unit: 'binary' }),
    fc.json(),
    fc
      .record({ key: fc.constantFrom(...keys), replacement: fc.jsonValue() })
      .map(({ key, replacement }) => JSON.stringify({ ...value, [key]: replacement })),
    fc.constantFrom(...keys).map((key) => JSON.stringify({ ...value, [key]: undefined })),
    fc.nat({ max: valid.length }).map((cut) => valid.slice(0, cut)),
  );
}

const headerNames = [
  'x-slack-signature',
  'x-slack-request-timestamp',
  'x-telegram-bot-api-secret-token',
  'x-signature-ed25519',
  'x-signature-timestamp',
  'x-tributary-signature',
  'x-tributary-timestamp',
  'content-type',
];

describe.each(Object.entries(routes))('fuzzing %s', (_, route) => {
  it('answers only 4xx to unsigned noise and queues nothing', async () => {
    const before = await h.keyCount();
    await fc.assert(
      fc.asyncProperty(
        mutated(route.valid()),
        fc.dictionary(
          fc.constantFrom(...headerNames),
          fc.string({ maxLength: 80 }).filter((v) => /^[\x20-\x7e]*$/.test(v)),
        ),
        async (body, headers) => {
          const answer = await h.post(route.path, body, headers);
          expect(answer.status).toBeGreaterThanOrEqual(400);
          expect(answer.status).toBeLessThan(500);
          expect(typeof answer.body.error).toBe('string');
        },
      ),
      { numRuns: 600 },
    );
    expect(await h.keyCount()).toBe(before);
  });

  it('never answers 5xx to correctly signed garbage; what it refuses leaves nothing queued', async () => {
    let accepted = 0;
    const before = await h.queuedCount();
    await fc.assert(
      fc.asyncProperty(mutated(route.valid()), async (body) => {
        const answer = await h.post(route.path, body, route.sign(body));
        expect(answer.status).toBeLessThan(500);
        if (answer.status >= 400) expect(typeof answer.body.error).toBe('string');
        if (answer.body.outcome === 'accepted') accepted++;
      }),
      { numRuns: 600 },
    );
    expect(await h.queuedCount()).toBe(before + accepted);
  });
});
