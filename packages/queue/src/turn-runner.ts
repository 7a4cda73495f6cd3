import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { DelayedError, type Job, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Batch, TurnReport } from './batch.js';
import { DirectDoorbells } from './direct-doorbells.js';
import {
  CANARY_JOB,
  type DirectDoorbell,
  DOORBELL_QUEUE,
  type Doorbell,
  type DoorbellData,
  doorbellPrefix,
} from './doorbells.js';
import { LeaseLostError } from './errors.js';
import { heartbeatIntervalMs, heartbeatVerdict, type RenewResult } from './lease-policy.js';
import { type QueueLogger, silentLogger } from './logger.js';
import { SlotGate } from './slot-gate.js';
import { Sweeper, type SweepReport } from './sweeper.js';
import { workerKeys } from './thread-keys.js';
import type { NextStep, ThreadQueue } from './thread-queue.js';
import { WorkerPresence } from './worker-presence.js';

/**
 * Runs one turn for a batch and reports how it ended (recorded with the batch when it is committed).
 * It must stop promptly when `signal` aborts; its result is then ignored.
 */
export type TurnHandler = (batch: Batch, signal: AbortSignal) => Promise<TurnReport>;

/** Why a turn was aborted; carried as `signal.reason`. */
export class TurnAbortedError extends Error {
  constructor(
    readonly why: 'lease-lost' | 'shutdown',
    detail: string,
  ) {
    super(`turn aborted (${why}): ${detail}`);
    this.name = 'TurnAbortedError';
  }
}

/** Thrown by a handler when retrying the batch cannot help: it is dead-lettered at once. */
export class FinalTurnError extends Error {
  override name = 'FinalTurnError';
}

export interface TurnRunnerOptions {
  queue: ThreadQueue;
  doorbell: Doorbell;
  /** BullMQ needs its own blocking connection; it is duplicated from this one. */
  connection: Redis;
  handler: TurnHandler;
  /** Turns run at once by this process (agent sessions it may drive). */
  concurrency?: number;
  owner?: string;
  logger?: QueueLogger;
  /** Every worker sweeps by default; tests may turn it off to observe lost doorbells. */
  sweep?: boolean;
  /** What the runner reports for metrics and health. */
  events?: RunnerEvents;
}

/** What became of a claimed batch in this runner. */
export type BatchOutcome = 'committed' | 'failed' | 'dead_lettered' | 'abandoned';

export interface RunnerEvents {
  batchEnded?(outcome: BatchOutcome): void;
  /** The heartbeat could not keep the lease: the turn was aborted, nothing committed. */
  leaseLost?(): void;
  /** A commit or fail found another owner's fence: nothing committed. */
  fenced?(): void;
  revived?(report: SweepReport): void;
  /** This runner's BullMQ worker took a doorbell job (proof it still consumes). */
  doorbellTaken?(): void;
}

type TurnOutcome =
  | { kind: 'done'; report: TurnReport }
  | { kind: 'failed'; reason: string; final: boolean }
  | { kind: 'aborted'; error: TurnAbortedError };

/** What to do when the claim finds another owner's live lease. */
type OnBusy = (retryInMs: number) => Promise<void>;

/**
 * Claims threads from doorbells and runs their turns: heartbeats the lease, aborts the handler when
 * the lease is lost, commits on success, and hands threads back on shutdown. Doorbells come from the
 * shared BullMQ queue and, with session affinity, from this worker's own list; both share one set of
 * turn slots.
 */
export class TurnRunner {
  readonly owner: string;
  private readonly worker: Worker<DoorbellData>;
  private readonly workerConnection: Redis;
  private readonly sweeper: Sweeper | undefined;
  private readonly gate: SlotGate;
  private readonly presence: WorkerPresence | undefined;
  private readonly direct: DirectDoorbells | undefined;
  private readonly directTurns = new Set<Promise<void>>();
  private readonly active = new Set<AbortController>();
  private readonly logger: QueueLogger;
  private closing = false;

  constructor(private readonly options: TurnRunnerOptions) {
    this.owner = options.owner ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
    this.logger = options.logger ?? silentLogger;
    const { queue } = options;
    const concurrency = options.concurrency ?? 1;
    // BullMQ's worker connection must retry forever; it is ours to close, BullMQ leaves it open.
    this.workerConnection = options.connection.duplicate({ maxRetriesPerRequest: null });
    this.worker = new Worker<DoorbellData>(DOORBELL_QUEUE, (job, token) => this.fromQueue(job, token), {
      connection: this.workerConnection,
      prefix: doorbellPrefix(queue.config.prefix),
      concurrency,
      // Our lease, not BullMQ's job lock, decides who owns a thread; a stalled doorbell is only
      // delivered again, which the claim script turns into a no-op or a wait for the lease.
      maxStalledCount: Number.MAX_SAFE_INTEGER,
      autorun: false,
    });
    this.worker.on('error', (error) => this.logger.warn({ err: error }, 'doorbell worker error'));
    if (queue.config.affinity) {
      const keys = workerKeys(queue.config.prefix, this.owner);
      const presence = new WorkerPresence(options.connection, keys, queue.config.presenceTtlMs, this.logger);
      this.presence = presence;
      this.gate = new SlotGate(concurrency, (hasFree) => presence.set(hasFree));
      this.direct = new DirectDoorbells(
        options.connection.duplicate({ maxRetriesPerRequest: null }),
        keys.doorbells,
        this.gate,
        (doorbell) => this.fromOwnList(doorbell),
        this.logger,
      );
    } else {
      this.gate = new SlotGate(concurrency);
    }
    if (options.sweep !== false) {
      this.sweeper = new Sweeper(queue, options.doorbell, this.owner, this.logger, options.events?.revived);
    }
  }

  async start(): Promise<void> {
    this.sweeper?.start();
    void this.worker.run();
    await this.worker.waitUntilReady();
    this.direct?.start();
    this.presence?.start();
  }

  /**
   * Stops taking doorbells; turns that finish within `graceMs` commit, the rest are aborted and their
   * threads handed back (with a fresh epoch, so another worker claims them at once).
   */
  async close(graceMs = 0): Promise<void> {
    this.closing = true;
    // Ringers stop preferring this worker first; direct doorbells still in the list fall back.
    await this.presence?.stop();
    await this.direct?.stop();
    const closed = this.worker.close();
    this.gate.wakeAll();
    const drained = Promise.all([closed, Promise.all(this.directTurns)]);
    if (graceMs > 0 && this.active.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([drained, new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
      clearTimeout(timer);
    }
    for (const controller of this.active)
      controller.abort(new TurnAbortedError('shutdown', 'worker closing'));
    await drained;
    await this.sweeper?.stop();
    this.workerConnection.disconnect();
  }

  /** Whether a doorbell could start a turn here now. */
  get hasFreeSlot(): boolean {
    return this.gate.hasFree;
  }

  private async fromQueue(job: Job<DoorbellData>, token?: string): Promise<void> {
    this.options.events?.doorbellTaken?.();
    if (job.name === CANARY_JOB) return;
    if (!this.gate.tryAcquire()) return this.handBack(job, token);
    const { thread, epoch, fallback } = job.data;
    try {
      await this.serve(thread, epoch, false, async (retryInMs) => {
        // The fallback of a direct doorbell finding the thread running: the direct one was served.
        if (fallback) return;
        // Another owner's lease is live: look again when it would have expired.
        await job.moveToDelayed(Date.now() + retryInMs + 1, token);
        throw new DelayedError();
      });
    } finally {
      this.gate.release();
    }
  }

  /** All slots are taken by direct turns: the doorbell goes back to the queue for other workers. */
  private async handBack(job: Job<DoorbellData>, token?: string): Promise<void> {
    await job.moveToDelayed(Date.now(), token);
    // Taking another job before a slot frees would only hand it back too.
    await this.gate.whenFree();
    throw new DelayedError();
  }

  /** A direct doorbell, with its slot already acquired. */
  private fromOwnList({ thread, epoch }: DirectDoorbell): void {
    const turn = this.serve(thread, epoch, true, async () => {})
      .catch((error: unknown) => this.logger.warn({ err: error, thread }, 'direct doorbell failed'))
      .finally(() => {
        this.gate.release();
        this.directTurns.delete(turn);
      });
    this.directTurns.add(turn);
  }

  private async serve(thread: string, epoch: number, direct: boolean, onBusy: OnBusy): Promise<void> {
    const { queue, doorbell, events } = this.options;
    const claim = await queue.claim(thread, epoch, this.owner);
    if (claim.kind === 'busy') return onBusy(claim.retryInMs);
    if (claim.kind !== 'batch') return;
    // Served directly: the shared fallback would only find the thread running.
    if (direct) void doorbell.withdraw(queue.keys(thread).member, epoch).catch(() => {});

    let batch = claim.batch;
    for (;;) {
      const outcome = await this.runTurn(batch);
      let next: NextStep;
      try {
        if (outcome.kind === 'aborted') {
          if (outcome.error.why === 'shutdown') {
            await queue.abandon(batch.lease);
            events?.batchEnded?.('abandoned');
          } else events?.leaseLost?.();
          return;
        }
        if (outcome.kind === 'done') {
          next = await queue.commit(batch.lease, outcome.report);
          events?.batchEnded?.('committed');
        } else {
          next = await queue.fail(batch.lease, outcome.reason, outcome.final);
          // Anything but a retry means the script dead-lettered the batch and moved on.
          events?.batchEnded?.(next.kind === 'retry' ? 'failed' : 'dead_lettered');
        }
      } catch (error) {
        if (error instanceof LeaseLostError) {
          events?.fenced?.();
          this.logger.warn(
            { thread, batchId: batch.id, fence: batch.lease.fence },
            'fenced out; nothing committed',
          );
          return;
        }
        throw error;
      }
      if (next.kind !== 'batch') return;
      batch = next.batch;
    }
  }

  private async runTurn(batch: Batch): Promise<TurnOutcome> {
    const controller = new AbortController();
    if (this.closing) return { kind: 'aborted', error: new TurnAbortedError('shutdown', 'worker closing') };
    this.active.add(controller);
    const stopHeartbeat = this.heartbeat(batch, controller);
    const aborted = new Promise<never>((_, reject) => {
      controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true });
    });
    aborted.catch(() => {});
    try {
      const turn = this.options.handler(batch, controller.signal);
      turn.catch(() => {});
      const report = await Promise.race([turn, aborted]);
      return controller.signal.aborted
        ? { kind: 'aborted', error: controller.signal.reason }
        : { kind: 'done', report };
    } catch (error) {
      if (controller.signal.aborted) return { kind: 'aborted', error: controller.signal.reason };
      const reason = error instanceof Error ? error.message : String(error);
      return { kind: 'failed', reason, final: error instanceof FinalTurnError };
    } finally {
      stopHeartbeat();
      this.active.delete(controller);
    }
  }

  private heartbeat(batch: Batch, controller: AbortController): () => void {
    const { queue } = this.options;
    // Monotonic time: a wall-clock jump must neither extend nor cut short the trust window.
    const leaseMs = queue.config.leaseMs;
    let trustedUntil = performance.now() + leaseMs - Math.ceil(leaseMs / 3);
    const beat = async () => {
      const sentAt = performance.now();
      let result: RenewResult;
      try {
        batch.lease.expiresAt = await queue.renew(batch.lease);
        result = { kind: 'renewed' };
      } catch (error) {
        result = error instanceof LeaseLostError ? { kind: 'fenced' } : { kind: 'error' };
      }
      // A renewal counts from when it was sent: Redis started the new lease no later than that.
      const now = result.kind === 'renewed' ? sentAt : performance.now();
      const verdict = heartbeatVerdict(now, trustedUntil, result, leaseMs);
      if (verdict.kind === 'keep') trustedUntil = verdict.trustedUntil;
      else controller.abort(new TurnAbortedError('lease-lost', verdict.why));
    };
    const timer = setInterval(() => void beat(), heartbeatIntervalMs(leaseMs));
    return () => clearInterval(timer);
  }
}
