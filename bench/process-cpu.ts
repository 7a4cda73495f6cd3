import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's utime and stime (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** utime, stime, cutime, cstime of a process from /proc/<pid>/stat, in ms; zeros once it is gone. */
function statTimes(pid: number): { own: number; children: number } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ms = (i: number) => (Number(fields[i]) * 1000) / TICKS_PER_SECOND;
    return { own: ms(11) + ms(12), children: ms(13) + ms(14) };
  } catch {
    return { own: 0, children: 0 };
  }
}

function childrenOf(pid: number): number[] {
  const found: number[] = [];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const list = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      if (list !== '') found.push(...list.split(' ').map(Number));
    }
  } catch {
    // Gone meanwhile.
  }
  return found;
}

/** CPU ms of a process alone. */
export function processCpuMs(pid: number): number {
  return statTimes(pid).own;
}

/**
 * CPU ms of a live process's threads to the nanosecond (the scheduler's sum_exec_runtime of each,
 * /proc/<pid>/task/<tid>/sched), for spans too short for clock ticks; `processCpuMs` where the kernel
 * does not expose it. Threads that already ended are not counted, so compare spans of a process whose
 * threads live on (Node's do).
 */
export function processCpuMsFine(pid: number): number {
  try {
    let total = 0;
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const sched = readFileSync(`/proc/${pid}/task/${task}/sched`, 'utf8');
      total += Number(/^se\.sum_exec_runtime\s*:\s*([\d.]+)$/m.exec(sched)![1]);
    }
    return total;
  } catch {
    return processCpuMs(pid);
  }
}

/** The ids of every live process below `pid`: children, their children, and so on. */
export function descendants(pid: number): number[] {
  const found: number[] = [];
  const pending = childrenOf(pid);
  while (pending.length > 0) {
    const child = pending.pop()!;
    found.push(child);
    pending.push(...childrenOf(child));
  }
  return found;
}

/**
 * CPU ms of everything below a process: its live descendants, plus the children it has already
 * reaped (their time is added to its cutime/cstime when they are waited for).
 */
export function descendantsCpuMs(pid: number): number {
  return descendants(pid).reduce((total, child) => total + statTimes(child).own, statTimes(pid).children);
}

/**
 * CPU ms of a process and everything below it, as finely as the kernel tells: each live process's
 * threads to the nanosecond, plus (in clock ticks) the children already reaped, whose time the kernel
 * adds to their parent's. Spans of a tree whose short-lived children come and go (a shell tool's).
 */
export function treeCpuMsFine(pid: number): number {
  return [pid, ...descendants(pid)].reduce(
    (total, member) => total + processCpuMsFine(member) + statTimes(member).children,
    0,
  );
}

/** Bytes a process has passed to write(2) so far (/proc/<pid>/io wchar: files, pipes, sockets). */
export function processBytesWritten(pid: number): number {
  return Number(/^wchar: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))![1]);
}
