import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** How long a SIGKILLed group may take to be gone before it is reported as surviving. */
const GONE_WITHIN_MS = 2_000;

/**
 * The process groups among `pgids` with a member still running. A zombie runs nothing: a frozen
 * worker cannot reap its dead agent yet, and the group is gone for every purpose that matters here.
 * Reads /proc where there is one; elsewhere a signal 0 to the group, zombies included.
 */
export function runningGroups(pgids: readonly number[]): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return pgids.filter((pgid) => {
      try {
        process.kill(-pgid, 0);
        return true;
      } catch {
        return false;
      }
    });
  }
  const wanted = new Set(pgids);
  const found = new Set<number>();
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // pid (comm) state ppid pgrp …: comm may hold spaces and parentheses, so read after the last ')'.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const group = Number(pgrp);
    if (state !== 'Z' && wanted.has(group)) found.add(group);
  }
  return [...found];
}

/**
 * SIGKILLs every process group listed and waits until none has a running member. Returns the groups
 * still running after the bound, which the caller reports.
 */
export async function killGroups(pgids: readonly number[]): Promise<number[]> {
  for (const pgid of pgids) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  const deadline = performance.now() + GONE_WITHIN_MS;
  let left = runningGroups(pgids);
  while (left.length > 0 && performance.now() < deadline) {
    await sleep(20);
    left = runningGroups(left);
  }
  return left;
}
