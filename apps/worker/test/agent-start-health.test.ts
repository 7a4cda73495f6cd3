import type { StartFailures } from '@tributary/acp';
import { waitFor } from '@tributary/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentStartHealth, probeDelayMs, START_FAILURES_TO_HOLD } from '../src/agents/agent-start-health.js';

const failures = (consecutive: number): StartFailures => ({ consecutive, lastError: 'exit 3' });

let health: AgentStartHealth | undefined;
afterEach(() => health?.close());

describe('a worker whose agent keeps failing to start', () => {
  it('holds off after three failures in a row, probes until a start works, then takes threads again', async () => {
    const events: string[] = [];
    let probes = 0;
    let agentWorks = false;
    const h = new AgentStartHealth({
      probe: async () => {
        probes++;
        if (!agentWorks) {
          h.failed(failures(START_FAILURES_TO_HOLD + probes));
          throw new Error('exit 3');
        }
        h.started();
      },
      holding: ({ consecutive }) => events.push(`holding after ${consecutive}`),
      recovered: () => events.push('recovered'),
    });
    health = h;
    h.failed(failures(1));
    h.failed(failures(2));
    expect(h.holding).toBe(false);
    h.failed(failures(3));
    expect(h.holding).toBe(true);
    // Further failures while it holds change nothing: one hold, one line.
    h.failed(failures(4));
    expect(events).toEqual(['holding after 3']);

    await waitFor(() => probes >= 2, { what: 'two probes' });
    agentWorks = true;
    await waitFor(() => !h.holding, { what: 'the hold to end', timeoutMs: 10_000 });
    expect(events).toEqual(['holding after 3', 'recovered']);
  });

  it('ends the hold on any start that works, a thread’s as well as a probe’s', () => {
    const events: string[] = [];
    health = new AgentStartHealth({
      probe: () => new Promise(() => {}),
      holding: () => events.push('holding'),
      recovered: () => events.push('recovered'),
    });
    health.started();
    health.failed(failures(3));
    health.started();
    expect(events).toEqual(['holding', 'recovered']);
  });

  it('probes with a pause that doubles from 1 s to at most 15 s', () => {
    expect([0, 1, 2, 3, 4, 5, 10].map(probeDelayMs)).toEqual([
      1_000, 2_000, 4_000, 8_000, 15_000, 15_000, 15_000,
    ]);
  });
});
