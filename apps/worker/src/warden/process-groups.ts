import { setTimeout as sleep } from 'node:timers/promises';
import { killAgentTree, stillRunning } from '@tributary/acp/process-tree';

/** How long SIGKILLed agents may take to be gone before they are reported as surviving. */
const GONE_WITHIN_MS = 2_000;

/**
 * SIGKILLs the agents led by `leaders` (and the processes `roots`, with what they forked): their process groups and every descendant, tools that moved
 * to sessions of their own and whatever they forked meanwhile included (killAgentTree), and waits until
 * none of them runs. Returns the processes still running after the bound (another PID namespace, a
 * process this user may not signal), which the caller reports and must not let another worker run
 * beside.
 */
export async function killAgents(
  leaders: readonly number[],
  roots: readonly number[] = [],
): Promise<number[]> {
  const members = killAgentTree(leaders, roots);
  const deadline = performance.now() + GONE_WITHIN_MS;
  let left = stillRunning(members);
  while (left.length > 0 && performance.now() < deadline) {
    await sleep(20);
    left = stillRunning(left);
  }
  return left;
}
