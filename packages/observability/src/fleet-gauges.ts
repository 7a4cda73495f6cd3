import type { Metrics } from './create-metrics.js';
import {
  BULLMQ_JOB_STATES,
  type BullmqJobState,
  DEAD_KINDS,
  type DeadKind,
  EVICTION_CAUSES,
  type EvictionCause,
} from './label-values.js';

export interface FleetReading {
  runnable: number;
  running: number;
  backlog: number;
  jobs: Partial<Record<BullmqJobState, number>>;
  /** Doorbells in their routes' lines, in front of the queues. */
  lined: number;
  /** Dead letters and dead replies kept, and the running totals of those the TTL and the caps dropped. */
  dead: Record<DeadKind, { held: number; evicted: Record<EvictionCause, number> }>;
  /** Each worker pool's runnable and running threads and its workers taking turns. */
  pools: Record<string, { runnable: number; running: number; workers: number }>;
}

/**
 * The fleet-wide gauges, read from Redis at scrape time. Ingress registers them too, so the
 * autoscaling signal exists while no worker runs (scaling up from zero).
 */
export function observeFleet(metrics: Metrics, read: () => Promise<FleetReading>): void {
  metrics.onScrape(
    [
      metrics.threadsRunnable,
      metrics.threadsRunning,
      metrics.backlogMessages,
      metrics.bullmqJobs,
      metrics.doorbellsLined,
      metrics.deadItems,
      metrics.deadEvictions,
      metrics.poolThreadsRunnable,
      metrics.poolThreadsRunning,
      metrics.poolWorkers,
    ],
    async () => {
      const reading = await read();
      metrics.threadsRunnable.set(reading.runnable);
      metrics.threadsRunning.set(reading.running);
      metrics.backlogMessages.set(reading.backlog);
      for (const state of BULLMQ_JOB_STATES) metrics.bullmqJobs.set({ state }, reading.jobs[state] ?? 0);
      metrics.doorbellsLined.set(reading.lined);
      // A pool that went away (no worker, no thread) must not keep its last reading.
      for (const gauge of [metrics.poolThreadsRunnable, metrics.poolThreadsRunning, metrics.poolWorkers])
        gauge.reset();
      for (const [pool, figures] of Object.entries(reading.pools)) {
        metrics.poolThreadsRunnable.set({ pool }, figures.runnable);
        metrics.poolThreadsRunning.set({ pool }, figures.running);
        metrics.poolWorkers.set({ pool }, figures.workers);
      }
      for (const kind of DEAD_KINDS) {
        metrics.deadItems.set({ kind }, reading.dead[kind].held);
        for (const cause of EVICTION_CAUSES) {
          metrics.deadEvictions.set({ kind, cause }, reading.dead[kind].evicted[cause]);
        }
      }
    },
  );
}
