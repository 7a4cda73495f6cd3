import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { DelayedError, type Job, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Batch } from './batch.js';
import { DOORBELL_QUEUE, type Doorbell, type DoorbellData, doorbellPrefix } from './doorbells.js';
import { LeaseLostError } from './errors.js';
import { heartbeatIntervalMs, heartbeatVerdict, type RenewResult } from './lease-policy.js';
import { type QueueLogger, silentLogger } from './logger.js';
import { Sweeper } from './sweeper.js';
import type { NextStep, ThreadQueue } from './thread-queue.js';

/** Runs one turn for a batch. It must stop promptly when `signal` aborts; its result is then ignored. */
export type TurnHandler = (batch: Batch, signal: AbortSignal) => Promise<void>;

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
}

type TurnOutcome =
  | { kind: 'done' }
  | { kind: 'failed'; reason: string; final: boolean }
  | { kind: 'aborted'; error: TurnAbortedError };

/**
 * Claims threads from doorbells and runs their turns: heartbeats the lease, aborts the handler when
 * the lease is lost, commits on success, and hands threads back on shutdown.
 */
export class TurnRunner {
  readonly owner: string;
  private readonly worker: Worker<DoorbellData>;
  private readonly workerConnection: Redis;
  private readonly sweeper: Sweeper | undefined;
  private readonly active = new Set<AbortController>();
  private readonly logger: QueueLogger;
  private closing = false;

  constructor(private readonly options: TurnRunnerOptions) {
    this.owner = options.owner ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
    this.logger = options.logger ?? silentLogger;
    const { queue } = options;
    // BullMQ's worker connection must retry forever; it is ours to close, BullMQ leaves it open.
    this.workerConnection = options.connection.duplicate({ maxRetriesPerRequest: null });
    this.worker = new Worker<DoorbellData>(DOORBELL_QUEUE, (job, token) => this.process(job, token), {
      connection: this.workerConnection,
      prefix: doorbellPrefix(queue.config.prefix),
      concurrency: options.concurrency ?? 1,
      // Our lease, not BullMQ's job lock, decides who owns a thread; a stalled doorbell is only
      // delivered again, which the claim script turns into a no-op or a wait for the lease.
      maxStalledCount: Number.MAX_SAFE_INTEGER,
      autorun: false,
    });
    this.worker.on('error', (error) => this.logger.warn({ err: error }, 'doorbell worker error'));
    if (options.sweep !== false) {
      this.sweeper = new Sweeper(queue, options.doorbell, this.owner, this.logger);
    }
  }

  async start(): Promise<void> {
    this.sweeper?.start();
    void this.worker.run();
    await this.worker.waitUntilReady();
  }

  /** Stops taking doorbells, aborts running turns and hands their threads back. */
  async close(): Promise<void> {
    this.closing = true;
    const closed = this.worker.close();
    for (const controller of this.active)
      controller.abort(new TurnAbortedError('shutdown', 'worker closing'));
    await closed;
    await this.sweeper?.stop();
    this.workerConnection.disconnect();
  }

  private async process(job: Job<DoorbellData>, token?: string): Promise<void> {
    const { queue } = this.options;
    const { thread, epoch } = job.data;
    const claim = await queue.claim(thread, epoch, this.owner);
    if (claim.kind === 'busy') {
      // Another owner's lease is live: look again when it would have expired.
      await job.moveToDelayed(Date.now() + claim.retryInMs + 1, token);
      throw new DelayedError();
    }
    if (claim.kind !== 'batch') return;

    let batch = claim.batch;
    for (;;) {
      const outcome = await this.runTurn(batch);
      let next: NextStep;
      try {
        if (outcome.kind === 'aborted') {
          if (outcome.error.why === 'shutdown') await queue.abandon(batch.lease);
          return;
        }
        next =
          outcome.kind === 'done'
            ? await queue.commit(batch.lease)
            : await queue.fail(batch.lease, outcome.reason, outcome.final);
      } catch (error) {
        if (error instanceof LeaseLostError) {
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
      await Promise.race([turn, aborted]);
      return controller.signal.aborted
        ? { kind: 'aborted', error: controller.signal.reason }
        : { kind: 'done' };
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
