/**
 * Signals every process in the group led by `pid` (agents are spawned detached, so pgid = pid).
 * Returns false when the group is already gone.
 */
export function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
}
