import type { RedisClient } from '../connections.js';
import { DEFAULT_POOL } from '../queue-config.js';
import { fleetKeys, workerKeys } from '../thread-keys.js';

/** What a worker reports of itself (docs/adr/0027-operator-actions-audit-and-drain.md). */
export interface WorkerStatus {
  owner: string;
  host: string;
  pid: number;
  /** When the process started (ms since the epoch, the worker's clock). */
  startedAt: number;
  /** `taking` doorbells; `draining` its threads back; `drained`: up, taking none, holding none. */
  state: 'taking' | 'draining' | 'drained';
  concurrency: number;
  /**
   * The worker pool whose threads it serves (docs/adr/0060); absent from a worker of a version before
   * pools, which serves the default pool.
   */
  pool?: string;
  /** Threads whose turn runs on it now. */
  running: string[];
  /** Live agent sessions: the thread, its ACP session id, the agent process that holds it. */
  sessions: { thread: string; sessionId: string | null; pid: number | null }[];
  /** Agent processes alive and how many sessions each holds. */
  agentProcesses: { pid: number; sessions: number }[];
  /** When this report was written (ms since the epoch, the worker's clock). */
  reportedAt: number;
}

/** How many workers of each pool take turns now, by their reports (absent pools: none). */
export function takingWorkersByPool(reports: readonly WorkerStatus[]): Map<string, number> {
  const taking = new Map<string, number>();
  for (const report of reports) {
    if (report.state !== 'taking') continue;
    const pool = report.pool ?? DEFAULT_POOL;
    taking.set(pool, (taking.get(pool) ?? 0) + 1);
  }
  return taking;
}

/** How long an operator's drain request waits for its worker to read it before it lapses. */
const DRAIN_REQUEST_TTL_MS = 60 * 60 * 1000;

/**
 * The fleet's workers as they report themselves, for the admin API, and the drain requests operators
 * leave for them. A worker's report expires unless renewed, and the list of workers forgets one that
 * stopped reporting, so a crashed worker leaves the list on its own.
 */
export class WorkerRegistry {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  /** Writes `status`, kept `ttlMs` unless written again. */
  async report(status: WorkerStatus, ttlMs: number): Promise<void> {
    const { workers } = fleetKeys(this.prefix);
    const now = Date.now();
    await Promise.all([
      this.redis.set(workerKeys(this.prefix, status.owner).status, JSON.stringify(status), 'PX', ttlMs),
      this.redis.zadd(workers, now, status.owner),
      this.redis.zremrangebyscore(workers, '-inf', now - ttlMs),
    ]);
  }

  /** Withdraws the worker's report (it stopped). */
  async withdraw(owner: string): Promise<void> {
    const keys = workerKeys(this.prefix, owner);
    await Promise.all([
      this.redis.del(keys.status, keys.drain),
      this.redis.zrem(fleetKeys(this.prefix).workers, owner),
    ]);
  }

  /** Every worker that reported recently, by owner. Bounded by the fleet's size. */
  async list(): Promise<WorkerStatus[]> {
    const owners = await this.redis.zrange(fleetKeys(this.prefix).workers, 0, -1);
    const reports = await Promise.all(owners.map((owner) => this.get(owner)));
    return reports.filter((report): report is WorkerStatus => report !== undefined);
  }

  async get(owner: string): Promise<WorkerStatus | undefined> {
    const raw = await this.redis.get(workerKeys(this.prefix, owner).status);
    return raw === null ? undefined : (JSON.parse(raw) as WorkerStatus);
  }

  /** Asks the worker to drain; false when no such worker reports. */
  async requestDrain(owner: string): Promise<boolean> {
    if ((await this.get(owner)) === undefined) return false;
    await this.redis.set(workerKeys(this.prefix, owner).drain, '1', 'PX', DRAIN_REQUEST_TTL_MS);
    return true;
  }

  /** Whether an operator asked this worker to drain. */
  async drainRequested(owner: string): Promise<boolean> {
    return (await this.redis.exists(workerKeys(this.prefix, owner).drain)) === 1;
  }
}
