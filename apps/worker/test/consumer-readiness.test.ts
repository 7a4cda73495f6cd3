import { waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { message, startHarness, type WorkerHarness } from './worker-fixture.js';

describe('worker readiness', () => {
  let h: WorkerHarness;
  beforeAll(async () => {
    h = await startHarness(
      {},
      {},
      { consumerTiming: { periodMs: 50, stalledAfterMs: 10_000, windowMs: 1_000 } },
    );
  });
  afterAll(() => h.close());

  it('is ready while it consumes its canaries and answers turns', async () => {
    await h.send('th', message('hello'));
    await waitFor(() => h.sent.length === 1, { what: 'a reply' });
    // A sleep on purpose: the readiness window (1 s) must pass since the turn's doorbell, the last job
    // that was not a canary, so that only canaries consumed since then can keep the worker ready.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    const ready = await fetch(`${h.worker.healthUrl}/readyz`);
    expect(ready.status).toBe(200);
    const metrics = await (await fetch(`${h.worker.healthUrl}/metrics`)).text();
    expect(metrics).toMatch(/^tributary_doorbell_consumer_up 1$/m);
    expect((await fetch(`${h.worker.healthUrl}/livez`)).status).toBe(200);
  });
});
