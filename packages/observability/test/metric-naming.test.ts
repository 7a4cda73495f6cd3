import { describe, expect, it } from 'vitest';
import { CATALOGUE, createMetrics, METRIC_NAMES } from '../src/index.js';

// Labels whose values come from conversations: each would add a series per thread or person.
const FORBIDDEN_LABELS = [
  'thread',
  'thread_id',
  'thread_key',
  'user',
  'user_id',
  'channel',
  'channel_id',
  'sender',
  'sender_id',
  'batch_id',
];

const specs = Object.values(CATALOGUE);

describe('metric naming', () => {
  it('lists every catalogue metric once in METRIC_NAMES', () => {
    expect(new Set(METRIC_NAMES).size).toBe(METRIC_NAMES.length);
    expect([...METRIC_NAMES].sort()).toEqual(specs.map((spec) => spec.name).sort());
  });

  it('prefixes every metric, including the default process metrics, with tributary_', async () => {
    const all = await createMetrics().registry.getMetricsAsJSON();
    expect(all.map((metric) => metric.name)).toContain('tributary_process_cpu_seconds_total');
    for (const metric of all) expect(metric.name).toMatch(/^tributary_[a-z0-9_]+$/);
  });

  // Only the catalogue is ours to name: prom-client's defaults include gauges such as
  // nodejs_active_handles_total that predate the convention.
  it.each(specs.map((spec) => [spec.name, spec] as const))(
    '%s ends in _total iff it is a counter',
    (name, spec) => {
      expect(name.endsWith('_total')).toBe(spec.type === 'counter');
    },
  );

  it('uses no per-thread, per-user or per-channel label anywhere in the registry', async () => {
    const metrics = createMetrics();
    const labelNames = new Set<string>(specs.flatMap((spec): readonly string[] => spec.labelNames));
    for (const metric of await metrics.registry.getMetricsAsJSON()) {
      for (const value of metric.values) for (const label of Object.keys(value.labels)) labelNames.add(label);
    }
    for (const forbidden of FORBIDDEN_LABELS) expect(labelNames).not.toContain(forbidden);
  });

  it('names units in base units', () => {
    for (const spec of specs) expect(spec.name).not.toMatch(/_(milliseconds|ms|minutes|kilobytes|kb)(_|$)/);
  });
});
