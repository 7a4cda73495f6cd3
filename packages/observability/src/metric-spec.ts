// A metric is declared once, as data, so the catalogue, the exported name list and the typed metric
// object cannot drift apart.

interface BaseSpec<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
}

export interface CounterSpec<L extends string> extends BaseSpec<L> {
  readonly type: 'counter';
}

export interface GaugeSpec<L extends string> extends BaseSpec<L> {
  readonly type: 'gauge';
}

export interface HistogramSpec<L extends string> extends BaseSpec<L> {
  readonly type: 'histogram';
  readonly buckets: readonly number[];
}

export type MetricSpec = CounterSpec<string> | GaugeSpec<string> | HistogramSpec<string>;

export function counter<const L extends string = never>(
  name: string,
  help: string,
  labelNames: readonly L[] = [],
): CounterSpec<L> {
  return { type: 'counter', name, help, labelNames };
}

export function gauge<const L extends string = never>(
  name: string,
  help: string,
  labelNames: readonly L[] = [],
): GaugeSpec<L> {
  return { type: 'gauge', name, help, labelNames };
}

export function histogram<const L extends string = never>(
  name: string,
  help: string,
  labelNames: readonly L[],
  buckets: readonly number[],
): HistogramSpec<L> {
  return { type: 'histogram', name, help, labelNames, buckets };
}
