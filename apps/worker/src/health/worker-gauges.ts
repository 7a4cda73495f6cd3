import { statfs } from 'node:fs/promises';
import type { SessionPool } from '@tributary/acp';
import { type Metrics, observeFleet } from '@tributary/observability';
import type { Store } from '@tributary/queue';
import type { AgentStartHealth } from '../agents/agent-start-health.js';

/** What the gauges and the health answers read of a running worker. */
export interface WorkerProbes {
  store: Store;
  pool: SessionPool;
  starts: AgentStartHealth;
  /** Whether every doorbell queue's consumer still takes jobs (the runner's consumer watch). */
  consuming(): boolean;
}

/** The gauges read at each scrape: the fleet's queues, this worker's agents, its workspace volume. */
export function observeWorker(
  metrics: Metrics,
  parts: WorkerProbes & {
    /** The workspace root, whose volume's free space is reported. */
    roomsRoot: string;
  },
): void {
  const { store, pool, starts, consuming } = parts;
  observeFleet(metrics, () => store.fleetStats());
  const agentGauges = [
    metrics.acpSessionsLive,
    metrics.agentProcesses,
    metrics.agentSparesReady,
    metrics.agentSparesTarget,
    metrics.agentSpareBytes,
    metrics.agentStartsWaiting,
    metrics.agentStartsFailing,
  ];
  metrics.onScrape([...agentGauges, metrics.doorbellConsumerUp], () => {
    metrics.acpSessionsLive.set(pool.liveSessions);
    metrics.agentProcesses.set(pool.liveProcesses);
    metrics.agentSparesReady.set(pool.readySpares);
    metrics.agentSparesTarget.set(pool.spareTarget);
    metrics.agentSpareBytes.set(pool.bytesPerSpare ?? 0);
    metrics.agentStartsWaiting.set(pool.startsWaiting);
    metrics.agentStartsFailing.set(starts.holding ? 1 : 0);
    metrics.doorbellConsumerUp.set(consuming() ? 1 : 0);
  });
  metrics.onScrape([metrics.workspaceVolumeFreeBytes, metrics.workspaceVolumeSizeBytes], async () => {
    const volume = await statfs(parts.roomsRoot);
    metrics.workspaceVolumeFreeBytes.set(volume.bavail * volume.bsize);
    metrics.workspaceVolumeSizeBytes.set(volume.blocks * volume.bsize);
  });
}
