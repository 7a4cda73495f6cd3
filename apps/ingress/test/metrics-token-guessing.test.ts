import { FAILED_AUTH_PER_MINUTE } from '@tributary/platforms';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type IngressHarness, startIngressHarness } from './ingress-fixture.js';

const METRICS_TOKEN = 'ingress-metrics-token-0123';
let h: IngressHarness;
beforeAll(async () => {
  h = await startIngressHarness({ env: { METRICS_TOKEN } });
});
afterAll(() => h.close());

const scrape = (token: string) =>
  fetch(`${h.adminUrl}/metrics`, { headers: { authorization: `Bearer ${token}` } });

it('answers 429 with Retry-After once an address has sent too many wrong tokens; the right token still works', async () => {
  const statuses: number[] = [];
  for (let i = 0; i <= FAILED_AUTH_PER_MINUTE + 5; i++) {
    statuses.push((await scrape(`guess-${i}-of-the-same-length-0`)).status);
  }
  expect(statuses.slice(0, FAILED_AUTH_PER_MINUTE)).toEqual(Array(FAILED_AUTH_PER_MINUTE).fill(401));
  expect(new Set(statuses.slice(FAILED_AUTH_PER_MINUTE))).toEqual(new Set([429]));

  const refused = await scrape('one-more-guess-of-the-same-le');
  expect(refused.status).toBe(429);
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(await refused.json()).toMatchObject({ code: 'rate_limited' });

  const allowed = await scrape(METRICS_TOKEN);
  expect(allowed.status).toBe(200);
  expect(await allowed.text()).toContain('tributary_');
});
