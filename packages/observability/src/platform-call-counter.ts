import type { Metrics } from './create-metrics.js';
import { apiStatusLabel } from './label-values.js';

/** Counts every platform API call by status (`0`: no answer), for the platform-errors panels and alerts. */
export function platformCallCounter(metrics: Metrics) {
  return (platform: string, method: string, status: number): void => {
    metrics.platformApiCallsTotal.inc({ platform, method, status: apiStatusLabel(status) });
  };
}
