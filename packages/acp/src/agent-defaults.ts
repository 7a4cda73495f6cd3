import { availableParallelism } from 'node:os';

/**
 * The defaults of how a worker runs its agents, declared once: the session pool falls back on them and
 * the worker's configuration documents and validates the same values.
 */
export const agentDefaults = Object.freeze({
  /** Live sessions per pool, each in an agent process of its own (docs/adr/0015). */
  maxSessions: 8,
  /** Agent processes kept started and initialized for threads that have none (docs/adr/0037). */
  warmSpares: 1,
  /**
   * Memory all warm spares of a worker may take together, in MB (PSS): room to keep more than
   * `warmSpares` while new threads arrive faster than one covers (docs/adr/0047).
   */
  warmSparesMemoryMb: 512,
  /** Warm spares that all went unused this long are one too many: one is stopped, down to the floor. */
  spareShrinkMs: 60_000,
  /** How long a cancelled turn may take to end before its process group is killed. */
  cancelTimeoutMs: 5_000,
  /** Bound on the `initialize` answer, and on the `authenticate` one. */
  initializeTimeoutMs: 15_000,
  /** Time between SIGTERM and SIGKILL of an agent's process group. */
  killGraceMs: 2_000,
  /**
   * Agent processes started at once by one worker: one per CPU it may use. A start is mostly CPU
   * (loading a runtime and its modules); more at once only makes all of them slower together.
   */
  startConcurrency: (): number => Math.max(1, availableParallelism()),
});
