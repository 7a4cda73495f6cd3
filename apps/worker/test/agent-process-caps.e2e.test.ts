import { readdirSync, readFileSync } from 'node:fs';
import { waitFor } from '@tributary/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Fleet, type FleetWorker, startFleet } from './fleet/fleet.js';
import { message } from './worker-fixture.js';

let fleet: Fleet | undefined;
afterEach(async () => {
  await fleet?.close();
  fleet = undefined;
});

/** The worker's agent processes running now: its children but its warden (zombies excluded). */
function agentProcesses(worker: FleetWorker): number {
  let count = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state === 'Z' || Number(ppid) !== worker.pid) continue;
      if (!readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('warden')) count++;
    } catch {
      // Gone while we looked.
    }
  }
  return count;
}

// A fixed spare: with a memory budget the cap grows with the spares the budget pays for (warm-spares.test).
const CAPS = {
  WORKER_CONCURRENCY: '2',
  AGENT_MAX_SESSIONS: '2',
  AGENT_WARM_SPARES: '1',
  AGENT_WARM_SPARES_MEMORY_MB: '0',
};

describe('agent processes per worker', { timeout: 120_000 }, () => {
  it('a busy fleet of two workers never runs more agent processes than sessions + spares', async () => {
    const f = await startFleet(CAPS);
    fleet = f;
    const workers = await Promise.all([f.spawn(), f.spawn()]);
    const peaks = new Map(workers.map((w) => [w, 0]));
    const sampler = setInterval(() => {
      for (const w of workers) peaks.set(w, Math.max(peaks.get(w)!, agentProcesses(w)));
    }, 5);
    try {
      // Twelve threads over four sessions in all: every worker keeps opening and evicting sessions.
      const threads = Array.from({ length: 12 }, (_, i) => `gateway:C1:t${i}`);
      for (let round = 0; round < 3; round++) {
        for (const thread of threads) await f.send(thread, message(`round ${round}`));
      }
      await waitFor(
        async () => {
          const states = await Promise.all(threads.map((t) => f.queue.admin.state(t)));
          return states.every((s) => s.status === 'idle' && s.backlog === 0);
        },
        { what: 'every thread answered', timeoutMs: 90_000, intervalMs: 100 },
      );
    } finally {
      clearInterval(sampler);
    }
    for (const [worker, peak] of peaks) {
      expect(peak, `${worker.name}'s agent processes`).toBeLessThanOrEqual(3);
    }
    expect(Math.max(...peaks.values())).toBeGreaterThanOrEqual(2);
  });
});
