import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createMetrics, metricsContentType, TURN_OUTCOMES } from '../src/index.js';

describe('a fresh registry', () => {
  it('labels build info with the given version', async () => {
    const metrics = createMetrics(new Registry(), { version: '1.2.3' });
    const text = await metrics.registry.metrics();
    expect(text).toContain('tributary_build_info{version="1.2.3"} 1');
  });

  it('starts counters with fixed label values at zero, so increase() sees their first event', async () => {
    const text = await createMetrics().registry.metrics();
    for (const outcome of TURN_OUTCOMES)
      expect(text).toContain(`tributary_turns_total{outcome="${outcome}"} 0`);
    expect(text).toContain('tributary_sweeper_revivals_total{reason="lease"} 0');
    expect(text).toContain('tributary_dead_lettered_batches_total 0');
  });

  it('uses the registry it is given and serves the Prometheus text format', async () => {
    const registry = new Registry();
    const metrics = createMetrics(registry);
    expect(metrics.registry).toBe(registry);
    expect(registry.getSingleMetric('tributary_batch_size')).toBe(metrics.batchSize);
    expect(metricsContentType).toBe('text/plain; version=0.0.4; charset=utf-8');
  });
});
