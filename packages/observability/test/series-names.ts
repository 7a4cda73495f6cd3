import { Histogram } from 'prom-client';
import { createMetrics } from '../src/index.js';

// String literals ("...", '...', `...`) hold label values and regexes, never series names.
const STRING_LITERAL = /"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g;
// Metric names ([a-zA-Z_:][a-zA-Z0-9_:]*) of ours: exported series and tributary: recording rules.
const TRIBUTARY_NAME = /(?<![A-Za-z0-9_:])tributary[_:][A-Za-z0-9_:]*/g;

/** The tributary series and recording-rule names a PromQL expression reads. */
export function referencedNames(expr: string): string[] {
  return [...new Set(expr.replace(STRING_LITERAL, '""').match(TRIBUTARY_NAME) ?? [])];
}

/** Every series a registry from createMetrics() exposes, with the _bucket/_sum/_count of histograms. */
export async function exportedSeries(): Promise<Set<string>> {
  const series = new Set<string>();
  const { registry } = createMetrics();
  for (const { name } of await registry.getMetricsAsJSON()) {
    series.add(name);
    if (registry.getSingleMetric(name) instanceof Histogram) {
      for (const suffix of ['_bucket', '_sum', '_count']) series.add(name + suffix);
    }
  }
  return series;
}

/** The names `expr` reads that are neither exported nor in `known`. */
export function unknownNames(expr: string, known: ReadonlySet<string>): string[] {
  return referencedNames(expr).filter((name) => !known.has(name));
}
