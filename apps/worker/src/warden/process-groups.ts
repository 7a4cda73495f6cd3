import { setTimeout as sleep } from 'node:timers/promises';
import { agentProcesses, signalAgents, stillRunning } from '@tributary/acp/process-tree';

/** How long SIGKILLed agents may take to be gone before they are reported as surviving. */
const GONE_WITHIN_MS = 2_000;

/**
 * SIGKILLs the agents led by `leaders`: their process groups and every descendant, tools that moved
 * to sessions of their own included, and waits until none of them runs. Returns the processes still
 * running after the bound, which the caller reports.
 */
export async function killAgents(leaders: readonly number[]): Promise<number[]> {
  const members = agentProcesses(leaders);
  signalAgents(leaders, 'SIGKILL');
  const deadline = performance.now() + GONE_WITHIN_MS;
  let left = stillRunning(members);
  while (left.length > 0 && performance.now() < deadline) {
    await sleep(20);
    left = stillRunning(left);
  }
  return left;
}
