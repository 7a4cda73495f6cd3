import { FAILED_AUTH_PER_MINUTE } from '@tributary/platforms';
import { afterEach, expect, it } from 'vitest';
import { type IngressHarness, startIngressHarness } from './ingress-fixture.js';

// The admin API counts wrong tokens per client address: behind a trusted proxy that is the address the
// proxy names in X-Forwarded-For, otherwise the socket's, whatever a client claims.

const ACT = 'admin-token-for-the-tests-0123456789';
let h: IngressHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const admin = (harness: IngressHarness, token: string, client: string) =>
  fetch(`${harness.adminUrl}/admin/overview`, {
    headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': client },
  });

/** Sends wrong tokens "from" `client` until the admin API answers 429. */
async function spendBudget(harness: IngressHarness, client: string): Promise<void> {
  for (let i = 0; i <= FAILED_AUTH_PER_MINUTE; i++) {
    await admin(harness, `guess-${i}-of-the-same-length-000000`, client);
  }
  expect((await admin(harness, 'one-more-guess-of-the-same-length0', client)).status).toBe(429);
}

it('with TRUST_PROXY, limits by the address in X-Forwarded-For', async () => {
  h = await startIngressHarness({ env: { ADMIN_TOKENS: `ops:act:${ACT}`, TRUST_PROXY: '1' } });
  await spendBudget(h, '203.0.113.7');
  expect((await admin(h, 'a-guess-from-another-client-0000000', '203.0.113.8')).status).toBe(401);
  expect((await admin(h, ACT, '203.0.113.7')).status).toBe(200);
});

it('without it, limits by the socket address and ignores X-Forwarded-For', async () => {
  h = await startIngressHarness({ env: { ADMIN_TOKENS: `ops:act:${ACT}` } });
  await spendBudget(h, '203.0.113.7');
  expect((await admin(h, 'a-guess-claiming-another-client-00', '203.0.113.8')).status).toBe(429);
  expect((await admin(h, ACT, '203.0.113.8')).status).toBe(200);
});
