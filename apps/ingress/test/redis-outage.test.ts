import { waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  gatewayEvent,
  hmacHeaders,
  type IngressHarness,
  SECRETS,
  startIngressHarness,
} from './ingress-fixture.js';

let h: IngressHarness;
beforeAll(async () => {
  h = await startIngressHarness({ privateRedis: true });
});
afterAll(() => h.close());

async function deliver(text: string) {
  const body = gatewayEvent(text);
  const started = performance.now();
  const answer = await h.post('/webhooks/gateway', body, hmacHeaders(SECRETS.GATEWAY_SECRET, body));
  return { ...answer, ms: performance.now() - started };
}

describe('Redis outage', () => {
  it('answers 503 while Redis is down and recovers without a restart', async () => {
    expect((await deliver('before the outage')).status).toBe(200);

    await h.server.kill('SIGKILL');
    const during = await deliver('during the outage');
    expect(during.status).toBe(503);
    expect(during.body).toMatchObject({ code: 'redis_unavailable' });
    expect(during.headers.get('retry-after')).toBe('1');
    expect((await fetch(`${h.url}/readyz`)).status).toBe(503);
    // Printed, not asserted: the guarantee is "an answer, never a hang"; the figure shows how fast.
    console.warn(`ingress answered 503 ${during.ms.toFixed(1)} ms into a Redis outage`);

    await h.server.restart();
    // Refused deliveries queue nothing, so retrying until one is accepted queues exactly one.
    await waitFor(async () => (await deliver('after the outage')).status === 200, {
      what: 'ingress to accept again',
      timeoutMs: 5_000,
      intervalMs: 100,
    });
    expect((await fetch(`${h.url}/readyz`)).status).toBe(200);
    // The message acknowledged before the outage survived it (AOF); the refused one was never queued.
    expect(await h.queuedCount()).toBe(2);
  });
});
