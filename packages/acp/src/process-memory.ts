import { readFile } from 'node:fs/promises';
import { agentProcesses } from './process-tree.js';

/** Memory of a set of processes, summed. */
export interface Memory {
  rssKb: number;
  pssKb: number;
  processes: number;
}

const field = (text: string, name: string): number =>
  Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);

/**
 * RSS and PSS summed over an agent and everything it started (agentProcesses: its process group, an
 * agent spawning detached so that pgid = pid, and every descendant, which a sandbox puts in sessions of
 * their own: bwrap, its init and the agent). PSS splits shared pages between their users: what one
 * more such process costs.
 */
export async function agentMemory(leader: number): Promise<Memory> {
  const total: Memory = { rssKb: 0, pssKb: 0, processes: 0 };
  for (const pid of agentProcesses([leader])) {
    try {
      const rollup = await readFile(`/proc/${pid}/smaps_rollup`, 'utf8');
      total.rssKb += field(rollup, 'Rss');
      total.pssKb += field(rollup, 'Pss');
      total.processes++;
    } catch {
      // The process ended while we looked.
    }
  }
  return total;
}
