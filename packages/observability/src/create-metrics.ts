import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { CATALOGUE } from './catalogue.js';
import { REPLY_OUTCOMES, REVIVAL_REASONS, STEER_REFUSAL_REASONS, TURN_OUTCOMES } from './label-values.js';
import { type LogSink, silentLogger } from './log-sink.js';
import type { CounterSpec, GaugeSpec, HistogramSpec, MetricSpec } from './metric-spec.js';
import { type ScrapeRead, ScrapeReaders } from './scrape-readers.js';

type MetricFor<S> =
  S extends HistogramSpec<infer L>
    ? Histogram<L>
    : S extends CounterSpec<infer L>
      ? Counter<L>
      : S extends GaugeSpec<infer L>
        ? Gauge<L>
        : never;

/** One typed prom-client metric per catalogue entry. */
export type MetricSet = { readonly [K in keyof typeof CATALOGUE]: MetricFor<(typeof CATALOGUE)[K]> };

export interface Metrics extends MetricSet {
  readonly registry: Registry;
  /**
   * Registers a read that sets `gauges` before each scrape reports them. When the read throws, those
   * gauges report NaN (or, when labelled, no series) for that scrape instead of a stale value,
   * `tributary_scrape_read_failures_total` counts it and the logger says why (rate-limited).
   */
  onScrape(gauges: readonly Gauge<string>[], read: ScrapeRead): void;
}

export interface MetricsOptions {
  /** The `version` label of `tributary_build_info`. */
  readonly version?: string;
  /** Where a failed scrape-time read is explained, at warn; pass the process's logger. */
  readonly logger?: LogSink;
}

/** The Content-Type of `registry.metrics()` output (Prometheus text format 0.0.4). */
export const metricsContentType: string = Registry.PROMETHEUS_CONTENT_TYPE;

/**
 * Creates every Tributary metric, and prom-client's default process metrics, in `registry`. Call it once
 * per registry: prom-client refuses a second metric with the same name.
 */
export function createMetrics(registry = new Registry(), options: MetricsOptions = {}): Metrics {
  collectDefaultMetrics({ register: registry, prefix: 'tributary_' });

  const unlabelled = new Set<Gauge<string>>();
  const gaugeNames = new Map<Gauge<string>, string>();
  const readers = new ScrapeReaders((gauges) => {
    metrics.scrapeReadFailuresTotal.inc();
    for (const gauge of gauges) {
      gauge.reset();
      if (unlabelled.has(gauge)) gauge.set(Number.NaN);
    }
  }, options.logger ?? silentLogger);
  const collect = () => readers.run();

  const entries = Object.entries(CATALOGUE).map(([key, spec]: [string, MetricSpec]) => {
    const metric = instantiate(spec, registry, collect);
    if (metric instanceof Gauge) gaugeNames.set(metric, spec.name);
    if (metric instanceof Gauge && spec.labelNames.length === 0) unlabelled.add(metric);
    return [key, metric];
  });
  const metrics = Object.fromEntries(entries) as MetricSet;

  // Counters with fixed label values start at 0, so increase() sees their first event; an alert on a
  // series that appears with value 1 would never fire.
  for (const outcome of TURN_OUTCOMES) metrics.turnsTotal.inc({ outcome }, 0);
  for (const reason of REVIVAL_REASONS) metrics.sweeperRevivalsTotal.inc({ reason }, 0);
  for (const outcome of REPLY_OUTCOMES) metrics.replyDeliveriesTotal.inc({ outcome }, 0);
  for (const reason of STEER_REFUSAL_REASONS) metrics.steerRefusalsTotal.inc({ reason }, 0);
  metrics.buildInfo.set({ version: options.version ?? 'unknown' }, 1);

  return {
    ...metrics,
    registry,
    onScrape(gauges, read) {
      readers.add(gauges.map((gauge) => gaugeNames.get(gauge) ?? 'unnamed').join(','), gauges, read);
    },
  };
}

function instantiate(spec: MetricSpec, registry: Registry, collect: () => Promise<void>) {
  const config = { name: spec.name, help: spec.help, labelNames: spec.labelNames, registers: [registry] };
  switch (spec.type) {
    case 'counter':
      return new Counter(config);
    case 'gauge':
      return new Gauge({ ...config, collect });
    case 'histogram':
      return new Histogram({ ...config, buckets: [...spec.buckets] });
  }
}
