import { readdirSync, readFileSync } from 'node:fs';

/** A running process as /proc shows it. */
interface ProcessEntry {
  pid: number;
  ppid: number;
  pgrp: number;
}

/**
 * Every process on the machine that is not a zombie (a zombie runs nothing), from /proc; empty where
 * there is none, and then only process groups can be signalled.
 */
function runningProcesses(): ProcessEntry[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const processes: ProcessEntry[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // pid (comm) state ppid pgrp …: comm may hold spaces and parentheses, so read after the last ')'.
    const [state, ppid, pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (state === 'Z') continue;
    processes.push({ pid: Number(entry), ppid: Number(ppid), pgrp: Number(pgrp) });
  }
  return processes;
}

/**
 * The processes that belong to the agents led by `leaders`: the members of their process groups and
 * every descendant of a member, wherever it went. Coding agents start tools in sessions of their own
 * (claude-agent-acp's shell commands call setsid), out of reach of a group kill; their parentage still
 * leads back to the agent while it lives.
 */
export function agentProcesses(leaders: readonly number[]): number[] {
  const processes = runningProcesses();
  const children = new Map<number, number[]>();
  for (const { pid, ppid } of processes) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  const groups = new Set(leaders);
  const found = new Set<number>();
  const visit = (pid: number) => {
    if (found.has(pid)) return;
    found.add(pid);
    for (const child of children.get(pid) ?? []) visit(child);
  };
  for (const { pid, pgrp } of processes) if (groups.has(pgrp)) visit(pid);
  return [...found];
}

/**
 * Signals every process of the agents led by `leaders` (see agentProcesses) and their groups. Never
 * throws: a process gone meanwhile is what was wanted.
 */
export function signalAgents(leaders: readonly number[], signal: NodeJS.Signals): void {
  const targets = [...leaders.map((leader) => -leader), ...agentProcesses(leaders)];
  for (const target of targets) {
    try {
      process.kill(target, signal);
    } catch {
      // Already gone.
    }
  }
}

/** Those of `pids` still running (zombies excepted). */
export function stillRunning(pids: readonly number[]): number[] {
  const running = new Set(runningProcesses().map(({ pid }) => pid));
  return pids.filter((pid) => running.has(pid));
}
