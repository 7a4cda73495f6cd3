import { afterAll, beforeAll, expect, it } from 'vitest';
import { startHarness, type WorkerHarness } from './worker-fixture.js';

// The ServiceMonitors send the Secret's METRICS_TOKEN to workers as to ingress; a worker given one
// must require it, or the token guards only half of the fleet's metrics.
const METRICS_TOKEN = 'worker-metrics-token-0123';
let h: WorkerHarness;
beforeAll(async () => {
  h = await startHarness({ METRICS_TOKEN });
});
afterAll(() => h.close());

it('answers /metrics only with the METRICS_TOKEN bearer, and probes without it', async () => {
  const scrape = (authorization?: string) =>
    fetch(`${h.worker.healthUrl}/metrics`, { headers: authorization ? { authorization } : {} });

  const refused = await scrape();
  expect(refused.status).toBe(401);
  expect(await refused.json()).toMatchObject({ error: expect.stringContaining('METRICS_TOKEN') });
  expect((await scrape('Bearer not-the-token-at-all')).status).toBe(401);

  const allowed = await scrape(`Bearer ${METRICS_TOKEN}`);
  expect(allowed.status).toBe(200);
  expect(await allowed.text()).toContain('tributary_threads_runnable');
  expect((await fetch(`${h.worker.healthUrl}/livez`)).status).toBe(200);
});
