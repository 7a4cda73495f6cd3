import { afterEach, describe, expect, it } from 'vitest';
import {
  gatewayEvent,
  hmacHeaders,
  type IngressHarness,
  SECRETS,
  startIngressHarness,
  telegramHeaders,
  telegramUpdate,
} from './ingress-fixture.js';

const LIMIT = 5;
const harnesses: IngressHarness[] = [];
const start = async (env: Record<string, string> = {}) => {
  const h = await startIngressHarness({ env: { RATE_LIMIT_PER_MINUTE: String(LIMIT), ...env } });
  harnesses.push(h);
  return h;
};
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.close()));
});

const signedGateway = (h: IngressHarness, text: string, channel = 'dev') => {
  const body = gatewayEvent(text, { channel: { id: channel, type: 'group' } });
  return h.post('/webhooks/gateway', body, hmacHeaders(SECRETS.GATEWAY_SECRET, body));
};

let attempts = 0;
/** Junk that fails verification: unsigned, or signed with a guessed secret, in turn. */
const junk = (h: IngressHarness, headers: Record<string, string> = {}) => {
  const body = gatewayEvent('let me in');
  const signature = attempts++ % 2 === 0 ? {} : hmacHeaders('guessed-secret', body);
  return h.post('/webhooks/gateway', body, { ...signature, ...headers });
};

describe('unverified traffic does not spend the budget of verified traffic', () => {
  it('accepts a signed request after a flood of unsigned junk from the same address', async () => {
    const h = await start();
    const statuses: number[] = [];
    for (let i = 0; i < 10 * LIMIT; i++) statuses.push((await junk(h)).status);
    // The address's failures are over budget: its next failure is told to back off.
    expect(statuses.slice(0, LIMIT)).toEqual(Array(LIMIT).fill(401));
    expect(statuses.at(-1)).toBe(429);
    const refused = await junk(h);
    expect(refused.body).toMatchObject({ code: 'rate_limited' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);

    const before = await h.queuedCount();
    const answer = await signedGateway(h, 'real work');
    expect(answer.status).toBe(200);
    expect(answer.body.outcome).toBe('accepted');
    expect(await h.queuedCount()).toBe(before + 1);
  });

  it('limits a verified flood per conversation: another conversation and another platform still pass', async () => {
    const h = await start();
    let answer = await signedGateway(h, 'busy');
    for (let i = 0; i < LIMIT && answer.status === 200; i++) answer = await signedGateway(h, 'busy');
    expect(answer.status).toBe(429);
    expect(answer.body).toMatchObject({ code: 'rate_limited' });
    expect(answer.body.error).toBe(`more than ${LIMIT} messages in this conversation a minute`);
    expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);

    const queued = await h.queuedCount();
    expect((await signedGateway(h, 'busy')).status).toBe(429);
    expect(await h.queuedCount()).toBe(queued);

    expect((await signedGateway(h, 'quiet', 'elsewhere')).body.outcome).toBe('accepted');
    const telegram = telegramUpdate('@tributary_bot still here', 1);
    const fromTelegram = await h.post('/webhooks/telegram', telegram, telegramHeaders());
    expect(fromTelegram.status).toBe(200);
    expect(fromTelegram.body.outcome).toBe('accepted');
  });

  it('does not let verified traffic spend the budget of failed verifications', async () => {
    const h = await start();
    for (let i = 0; i < 2 * LIMIT; i++) await signedGateway(h, 'work', `c${i}`);
    expect((await junk(h)).status).toBe(401);
  });
});

describe('TRUST_PROXY', () => {
  /** Spends the failure budget of `address` (as X-Forwarded-For gives it), then asks as `other`. */
  const floodThenAsk = async (h: IngressHarness, address: string, other: string) => {
    for (let i = 0; i <= LIMIT; i++) await junk(h, { 'x-forwarded-for': address });
    return {
      flooder: (await junk(h, { 'x-forwarded-for': address })).status,
      other: (await junk(h, { 'x-forwarded-for': other })).status,
    };
  };

  it('is off by default: X-Forwarded-For is ignored and the socket address is the client', async () => {
    const h = await start();
    expect(await floodThenAsk(h, '203.0.113.7', '198.51.100.9')).toEqual({ flooder: 429, other: 429 });
  });

  it('with a trusted hop, X-Forwarded-For names the client', async () => {
    const h = await start({ TRUST_PROXY: '1' });
    expect(await floodThenAsk(h, '203.0.113.7', '198.51.100.9')).toEqual({ flooder: 429, other: 401 });
  });

  it('with a list, only the listed proxies are believed', async () => {
    const trusted = await start({ TRUST_PROXY: '127.0.0.1/32' });
    expect(await floodThenAsk(trusted, '203.0.113.7', '198.51.100.9')).toEqual({ flooder: 429, other: 401 });
    const untrusted = await start({ TRUST_PROXY: '10.0.0.0/8' });
    expect(await floodThenAsk(untrusted, '203.0.113.7', '198.51.100.9')).toEqual({
      flooder: 429,
      other: 429,
    });
  });
});
