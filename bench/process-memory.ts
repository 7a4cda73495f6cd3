import { readdir, readFile } from 'node:fs/promises';

/** Memory of a set of processes, summed. */
export interface Memory {
  rssKb: number;
  pssKb: number;
  processes: number;
}

const field = (text: string, name: string): number =>
  Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);

/**
 * RSS and PSS summed over every process of the group `pgid` (an agent spawns detached: pgid = pid).
 * PSS splits shared pages between their users: what one more such process costs.
 */
export async function groupMemory(pgid: number): Promise<Memory> {
  const total: Memory = { rssKb: 0, pssKb: 0, processes: 0 };
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      const pgrp = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
      if (pgrp !== pgid) continue;
      const rollup = await readFile(`/proc/${entry}/smaps_rollup`, 'utf8');
      total.rssKb += field(rollup, 'Rss');
      total.pssKb += field(rollup, 'Pss');
      total.processes++;
    } catch {
      // The process ended while we looked.
    }
  }
  return total;
}
