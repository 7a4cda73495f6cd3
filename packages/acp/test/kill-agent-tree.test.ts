import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdir, readFile } from 'node:fs/promises';
import { expect, it } from 'vitest';
import { killAgentTree } from '../src/process-tree.js';
import { waitFor } from './support.js';

/** The pids of running processes whose command line holds `marker`. */
async function runningWith(marker: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const [cmdline, stat] = await Promise.all([
      readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => ''),
      readFile(`/proc/${entry}/stat`, 'utf8').catch(() => ''),
    ]);
    const zombie = stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
    if (!zombie && cmdline.includes(marker)) found.push(Number(entry));
  }
  return found;
}

it("kills tools that keep forking, outside the agent's process group, and every child they forked", async () => {
  // A duration no other process on the machine has: what remains of this tree is what holds it.
  const marker = `600.${process.pid}${Date.now() % 100_000}`;
  // An agent (its own process group) whose tool left the group with setsid and forks children as
  // fast as it can: a child forked after a scan, whose parent a kill then ends, leads nowhere.
  const tool = `setsid sh -c 'while :; do sleep ${marker} & done' &`;
  // Four of them, so that some child is always being forked while a kill runs.
  const agent = spawn('sh', ['-c', `${tool.repeat(4)} wait`], {
    detached: true,
    stdio: 'ignore',
  });
  await once(agent, 'spawn');
  await waitFor(async () => (await runningWith(marker)).length >= 100, 'the tools to have forked a while');

  killAgentTree([agent.pid!]);
  await waitFor(async () => (await runningWith(marker)).length === 0, 'every forked child to end', 5_000);
  // And none comes back: the forker is gone with them.
  expect(await runningWith(marker)).toEqual([]);
});
