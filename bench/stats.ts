/** Order statistics the benchmarks report: nearest-rank percentiles of a sample. */

/** The nearest-rank `p`th percentile of `values` (any order; not modified). */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** `value` to `digits` decimals, as the result files record figures. */
export function rounded(value: number, digits = 2): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}
