import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { affinityPush } from './script-calls.js';
import { Scripts } from './scripts.js';
import { workerKeys } from './thread-keys.js';

/** What a doorbell job carries: which thread to claim, under which epoch. */
export interface DoorbellData {
  thread: string;
  epoch: number;
  /**
   * Set on a shared doorbell rung with a preferred worker: it may have a twin in that worker's list, so
   * finding the thread already running (normally there) it does nothing instead of waiting for the
   * lease. Doing nothing is always safe: an expired lease is the sweeper's.
   */
  fallback?: boolean;
}

/** A delayed ring (retry), or a ring that prefers a worker (session affinity). */
export type RingOptions = { delayMs?: number } | { prefer: { owner: string; waitMs: number } };

/** The doorbell transport the queue rings through; the chaos test wraps it to lose some on purpose. */
export interface Doorbell {
  ring(thread: string, member: string, epoch: number, options?: RingOptions): Promise<void>;
  /** True while the shared doorbell job for this epoch is still waiting, delayed or running. */
  pending(member: string, epoch: number): Promise<boolean>;
  /** Drops the shared doorbell of an epoch that was claimed through affinity (best effort). */
  withdraw(member: string, epoch: number): Promise<void>;
}

export const DOORBELL_QUEUE = 'doorbell';

/** The name of canary jobs on the doorbell queue. */
export const CANARY_JOB = 'canary';

/** BullMQ keys of the doorbell queue share one hash tag, so it lives on one Cluster slot. */
export function doorbellPrefix(prefix: string): string {
  return `${prefix}:{dq}`;
}

/** Job ids embed the epoch, which only grows, so an id is never reused and a duplicate add is a no-op. */
export function doorbellJobId(member: string, epoch: number): string {
  return `t-${member}-${epoch}`;
}

/** A doorbell in a worker's own list, as the affinity script stores it. */
export interface DirectDoorbell {
  thread: string;
  epoch: number;
}

// A worker's list outlives its pushes by this much: items are only useful for `waitMs`, so the list of
// a worker that died disappears on its own.
const DIRECT_LIST_TTL_MS = 60_000;

export class BullDoorbell implements Doorbell {
  readonly queue: Queue<DoorbellData>;
  private readonly scripts: Scripts;

  constructor(
    connection: Redis,
    private readonly prefix: string,
  ) {
    this.queue = new Queue<DoorbellData>(DOORBELL_QUEUE, { connection, prefix: doorbellPrefix(prefix) });
    this.scripts = new Scripts(connection, [affinityPush]);
  }

  /**
   * Rings the shared queue. With `prefer`, the shared doorbell is added first, delayed by the affinity
   * wait, then handed to that worker directly; when the hand-over does not happen (worker gone, busy, or
   * Redis failing) the shared doorbell is promoted at once. Adding it first means whoever claims through
   * the direct doorbell always finds the shared one to withdraw.
   */
  async ring(thread: string, member: string, epoch: number, options: RingOptions = {}): Promise<void> {
    const job = {
      jobId: doorbellJobId(member, epoch),
      removeOnComplete: true,
      removeOnFail: { count: 1_000 },
    };
    if (!('prefer' in options)) {
      await this.queue.add('ring', { thread, epoch }, { ...job, delay: options.delayMs ?? 0 });
      return;
    }
    const { owner, waitMs } = options.prefer;
    const shared = await this.queue.add('ring', { thread, epoch, fallback: true }, { ...job, delay: waitMs });
    if (await this.handOver(owner, { thread, epoch }).catch(() => false)) return;
    // Not delayed (any more) means it already runs or ran: nothing to promote.
    await shared.promote().catch(() => {});
  }

  /**
   * A job that rings no thread: consuming one proves the BullMQ worker that took it still consumes
   * (see the worker's readiness canary). Idle workers are served in turn, so each one gets some.
   */
  async addCanary(owner: string): Promise<void> {
    await this.queue.add(
      CANARY_JOB,
      { thread: '', epoch: 0 },
      { removeOnComplete: true, removeOnFail: true, jobId: `canary-${owner}-${Date.now()}` },
    );
  }

  /**
   * Reads the job's own hash: O(1) however long the queue is. (getJobState finds a waiting job by its
   * position in the wait list, an LPOS scan per call, which made the sweeper quadratic in the backlog.)
   * A completed doorbell is removed and a failed one is finished; in every other state it will run.
   */
  async pending(member: string, epoch: number): Promise<boolean> {
    const job = await this.queue.getJob(doorbellJobId(member, epoch));
    return job !== undefined && !job.finishedOn;
  }

  async withdraw(member: string, epoch: number): Promise<void> {
    // A job already taken by another worker is locked and stays; it then finds the thread running.
    await this.queue.remove(doorbellJobId(member, epoch)).catch(() => 0);
  }

  close(): Promise<void> {
    return this.queue.close();
  }

  private async handOver(owner: string, doorbell: DirectDoorbell): Promise<boolean> {
    const keys = workerKeys(this.prefix, owner);
    return this.scripts.run(affinityPush, keys, {
      doorbell: JSON.stringify(doorbell),
      ttlMs: DIRECT_LIST_TTL_MS,
    });
  }
}
