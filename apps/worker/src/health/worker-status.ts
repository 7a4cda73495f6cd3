import { hostname } from 'node:os';
import type { SessionPool } from '@tributary/acp';
import type { LogSink } from '@tributary/observability';
import type { WorkerRegistry, WorkerStatus } from '@tributary/queue';

/** How often a worker reports itself and looks for an operator's drain request. */
const REPORT_EVERY_MS = 1_000;
/** A report lasts this long unless renewed: a worker that stopped leaves the list within it. */
const REPORT_TTL_MS = 10_000;
/** Threads remembered as possibly holding a live session (the pool evicts; what it still has counts). */
const SESSION_THREADS = 1_000;

export interface WorkerStatusOptions {
  registry: WorkerRegistry;
  owner: string;
  concurrency: number;
  /** WORKER_POOL: the threads it serves (docs/adr/0060). */
  workerPool: string;
  pool: Pick<SessionPool, 'has' | 'sessionIdOf' | 'pidOf'>;
  /** Threads whose turn runs here now. */
  running: () => Iterable<string>;
  logger: LogSink;
}

/**
 * What the admin API shows of this worker (docs/adr/0027-operator-actions-audit-and-drain.md): every
 * second it reports its running threads, its live sessions and their agent processes, and reads
 * whether an operator asked it to drain, which it then does once.
 */
export class WorkerStatusReporter {
  private readonly startedAt = Date.now();
  private readonly sessionThreads = new Set<string>();
  private state: WorkerStatus['state'] = 'taking';
  private timer: NodeJS.Timeout | undefined;
  private reporting: Promise<void> = Promise.resolve();
  /** Stops taking doorbells and hands the running threads back; the process stays up. */
  private drainWorker: () => Promise<void> = async () => {};

  constructor(private readonly options: WorkerStatusOptions) {}

  /** Reports from now on; an operator's drain request runs `drain`. */
  start(drain: () => Promise<void>): void {
    this.drainWorker = drain;
    this.timer = setInterval(() => {
      this.reporting = this.tick();
    }, REPORT_EVERY_MS);
    this.reporting = this.tick();
  }

  /** A thread whose turn ran here: its session may stay live in the pool. */
  served(thread: string): void {
    this.sessionThreads.delete(thread);
    this.sessionThreads.add(thread);
    if (this.sessionThreads.size > SESSION_THREADS) {
      this.sessionThreads.delete(this.sessionThreads.values().next().value!);
    }
  }

  /** Whether this worker was drained (or is draining): it takes no doorbells. */
  get draining(): boolean {
    return this.state !== 'taking';
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.reporting;
    await this.options.registry
      .withdraw(this.options.owner)
      .catch((error: unknown) =>
        this.options.logger.warn({ err: error }, 'worker report not withdrawn; it expires'),
      );
  }

  private async tick(): Promise<void> {
    const { registry, owner, logger } = this.options;
    try {
      if (this.state === 'taking' && (await registry.drainRequested(owner))) void this.drain();
      await registry.report(this.snapshot(), REPORT_TTL_MS);
    } catch (error) {
      logger.warn({ err: error }, 'worker report not written; retrying');
    }
  }

  private async drain(): Promise<void> {
    const { logger } = this.options;
    this.state = 'draining';
    logger.info(
      { owner: this.options.owner },
      'drain requested: taking no more doorbells, handing threads back',
    );
    try {
      await this.drainWorker();
      this.state = 'drained';
      logger.info({ owner: this.options.owner }, 'drained: no thread held, no doorbell taken; still up');
    } catch (error) {
      logger.error({ err: error }, 'drain failed; restart the worker to hand its threads back');
    }
  }

  private snapshot(): WorkerStatus {
    const { pool } = this.options;
    const sessions = [...this.sessionThreads]
      .filter((thread) => pool.has(thread))
      .map((thread) => ({
        thread,
        sessionId: pool.sessionIdOf(thread) ?? null,
        pid: pool.pidOf(thread) ?? null,
      }));
    const perProcess = new Map<number, number>();
    for (const { pid } of sessions) if (pid !== null) perProcess.set(pid, (perProcess.get(pid) ?? 0) + 1);
    return {
      owner: this.options.owner,
      host: hostname(),
      pid: process.pid,
      startedAt: this.startedAt,
      state: this.state,
      concurrency: this.options.concurrency,
      pool: this.options.workerPool,
      running: [...this.options.running()],
      sessions,
      agentProcesses: [...perProcess].map(([pid, count]) => ({ pid, sessions: count })),
      reportedAt: Date.now(),
    };
  }
}
