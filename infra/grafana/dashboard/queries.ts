// PromQL for the dashboard. Every query selects through `scope()`, so each one follows the dashboard's
// namespace and job variables: two stacks in one Prometheus are never summed together.

/** The label matchers every query carries, plus any of the panel's own. */
export function scope(...matchers: string[]): string {
  return `{${['namespace=~"$namespace"', 'job=~"$job"', ...matchers].join(', ')}}`;
}

/**
 * A recording rule's series: the rules aggregate over jobs and keep `namespace` (infra/prometheus/
 * rules.yml), so they carry no `job` to filter on.
 */
export function recorded(name: string, ...matchers: string[]): string {
  return `${name}{${['namespace=~"$namespace"', ...matchers].join(', ')}}`;
}

/** Also filtered by the platform variable. */
export const PLATFORM = 'platform=~"$platform"';

/** `sum by (labels) (rate(metric{scope}[$__rate_interval]))`. */
export function rateBy(labels: string, metric: string, ...matchers: string[]): string {
  const by = labels ? ` by (${labels})` : '';
  return `sum${by} (rate(${metric}${scope(...matchers)}[$__rate_interval]))`;
}

/** `sum by (labels) (increase(...))`: events per interval, for rare events a rate would hide. */
export function increaseBy(labels: string, metric: string, ...matchers: string[]): string {
  const by = labels ? ` by (${labels})` : '';
  return `sum${by} (increase(${metric}${scope(...matchers)}[$__rate_interval]))`;
}

/** The `q` quantile of a histogram, per `labels`. */
export function quantile(q: number, labels: string, histogram: string, ...matchers: string[]): string {
  const by = ['le', labels].filter(Boolean).join(', ');
  return `histogram_quantile(${q}, sum by (${by}) (rate(${histogram}_bucket${scope(...matchers)}[$__rate_interval])))`;
}

/** A fleet-wide gauge (every process reports the same value): max, never sum. */
export function fleet(gauge: string, labels = ''): string {
  const by = labels ? ` by (${labels})` : '';
  return `max${by} (${gauge}${scope()})`;
}
