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

    const logsBefore = h.logs.length;
    let refused = 0;
    const count = <T extends { status: number }>(answer: T): T => {
      if (answer.status === 503) refused++;
      return answer;
    };

    await h.server.kill('SIGKILL');
    const during = count(await deliver('during the outage'));
    expect(during.status).toBe(503);
    for (let i = 0; i < 20; i++) expect(count(await deliver(`retry ${i}`)).status).toBe(503);
    expect(await h.metrics()).toContain('tributary_ingress_redis_down 1');
    expect(during.body).toMatchObject({ code: 'redis_unavailable' });
    expect(during.headers.get('retry-after')).toBe('1');
    expect(count(await fetch(`${h.url}/readyz`)).status).toBe(503);
    // Printed, not asserted: the guarantee is "an answer, never a hang"; the figure shows how fast.
    console.warn(`ingress answered 503 ${during.ms.toFixed(1)} ms into a Redis outage`);

    await h.server.restart();
    // Refused deliveries queue nothing, so retrying until one is accepted queues exactly one.
    await waitFor(async () => count(await deliver('after the outage')).status === 200, {
      what: 'ingress to accept again',
      timeoutMs: 5_000,
      intervalMs: 100,
    });
    expect((await fetch(`${h.url}/readyz`)).status).toBe(200);
    // The message acknowledged before the outage survived it (AOF); the refused one was never queued.
    expect(await h.queuedCount()).toBe(2);

    // The outage is told once as it starts and once as it ends, not once per refused request.
    await waitFor(() => h.logs.some((line) => String(line.msg).startsWith('redis outage ended')), {
      what: 'the end of the outage to be logged',
    });
    const outageLogs = h.logs.slice(logsBefore);
    // No worker runs beside this ingress, which it also says (once an accepted message finds none).
    const warnings = outageLogs.filter((line) => (line.level as number) >= 40 && line.component !== 'pools');
    expect(warnings.map((line) => line.msg)).toEqual([
      'redis outage started: requests get 503 until Redis answers',
    ]);
    expect(outageLogs.filter((line) => String(line.msg).startsWith('redis outage ended'))).toEqual([
      expect.objectContaining({ refusedRequests: refused, durationMs: expect.any(Number) }),
    ]);
    expect(refused).toBeGreaterThanOrEqual(22);
    const metrics = await h.metrics();
    expect(metrics).toContain('tributary_ingress_redis_outages_total 1');
    expect(metrics).toContain('tributary_ingress_redis_down 0');
  });
});
