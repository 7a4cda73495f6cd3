import type { Metrics } from './create-metrics.js';
import { BULLMQ_JOB_STATES, type BullmqJobState } from './label-values.js';

export interface FleetReading {
  runnable: number;
  running: number;
  backlog: number;
  jobs: Partial<Record<BullmqJobState, number>>;
}

/**
 * The fleet-wide gauges, read from Redis at scrape time. Ingress registers them too, so the
 * autoscaling signal exists while no worker runs (scaling up from zero).
 */
export function observeFleet(metrics: Metrics, read: () => Promise<FleetReading>): void {
  metrics.onScrape(
    [metrics.threadsRunnable, metrics.threadsRunning, metrics.backlogMessages, metrics.bullmqJobs],
    async () => {
      const reading = await read();
      metrics.threadsRunnable.set(reading.runnable);
      metrics.threadsRunning.set(reading.running);
      metrics.backlogMessages.set(reading.backlog);
      for (const state of BULLMQ_JOB_STATES) metrics.bullmqJobs.set({ state }, reading.jobs[state] ?? 0);
    },
  );
}
