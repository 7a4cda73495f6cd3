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
 * every descendant of a member, wherever it went, and every descendant of `roots` (tools found while
 * their agent lived: once it is gone they still lead to their own children). Coding agents start
 * tools in sessions of their own (claude-agent-acp's shell commands call setsid), out of reach of a
 * group kill; their parentage still leads back to the agent while it lives.
 */
export function agentProcesses(leaders: readonly number[], roots: readonly number[] = []): number[] {
  const processes = runningProcesses();
  const children = new Map<number, number[]>();
  for (const { pid, ppid } of processes) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  const groups = new Set(leaders);
  const alive = new Set(processes.map(({ pid }) => pid));
  const found = new Set<number>();
  const visit = (pid: number) => {
    if (found.has(pid)) return;
    found.add(pid);
    for (const child of children.get(pid) ?? []) visit(child);
  };
  for (const { pid, pgrp } of processes) if (groups.has(pgrp)) visit(pid);
  for (const root of roots) if (alive.has(root)) visit(root);
  return [...found];
}

/** A process forking as fast as it can still meets a scan with nothing new well within this many. */
const MAX_FREEZE_SCANS = 100;

function signal(target: number, name: NodeJS.Signals): boolean {
  try {
    process.kill(target, name);
    return true;
  } catch {
    // Gone meanwhile, or not ours to signal: a survivor, which the caller's check reports.
    return false;
  }
}

/**
 * Kills every process of the agents led by `leaders` and below `roots` (see agentProcesses), however
 * they fork meanwhile: each one a scan finds is stopped first (a stopped process cannot fork, and
 * keeps leading to what it forked before), and the scans go on until one finds nothing new; then the
 * groups and every stopped process are killed. A single scan then kill would miss a child forked
 * between the two, which its killed parent no longer leads to. Returns every process it signalled;
 * never throws.
 */
export function killAgentTree(leaders: readonly number[], roots: readonly number[] = []): number[] {
  const frozen = new Set<number>();
  for (let scan = 0; scan < MAX_FREEZE_SCANS; scan++) {
    const fresh = agentProcesses(leaders, [...roots, ...frozen]).filter((pid) => !frozen.has(pid));
    if (fresh.length === 0) break;
    for (const pid of fresh) {
      signal(pid, 'SIGSTOP');
      frozen.add(pid);
    }
  }
  for (const leader of leaders) signal(-leader, 'SIGKILL');
  for (const pid of frozen) signal(pid, 'SIGKILL');
  return [...frozen];
}

/** Those of `pids` still running (zombies excepted). */
export function stillRunning(pids: readonly number[]): number[] {
  const running = new Set(runningProcesses().map(({ pid }) => pid));
  return pids.filter((pid) => running.has(pid));
}
