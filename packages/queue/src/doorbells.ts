import { Queue } from 'bullmq';
import { CLUSTER_SLOTS, clusterSlot } from './cluster-slot.js';
import type { RedisClient } from './connections.js';
import type { QueueConfig } from './queue-config.js';
import { affinityPush } from './script-calls.js';
import { Scripts } from './scripts.js';
import { bucketOf, decodeThread, workerKeys } from './thread-keys.js';

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

/**
 * A ring of the shared queue, delayed or not (`fallback`: the twin of a doorbell the enqueue script
 * already handed to the thread's last owner), or a ring that prefers a worker (session affinity).
 */
export type RingOptions =
  | { delayMs?: number; fallback?: boolean }
  | { prefer: { owner: string; waitMs: number } };

/** The doorbell transport the queue rings through; the chaos test wraps it to lose some on purpose. */
export interface Doorbell {
  ring(thread: string, member: string, epoch: number, options?: RingOptions): Promise<void>;
  /** True while the shared doorbell job for this epoch is still waiting, delayed or running. */
  pending(member: string, epoch: number): Promise<boolean>;
  /** Drops the shared doorbell of an epoch that was claimed through affinity (best effort). */
  withdraw(member: string, epoch: number): Promise<void>;
}

export const DOORBELL_QUEUE = 'doorbell';

/** The name of canary jobs on the doorbell queues. */
export const CANARY_JOB = 'canary';

/**
 * The BullMQ prefix of doorbell queue `index` of `count`. Each queue's keys share one hash tag, so it
 * lives on one Cluster slot; the tags are chosen so queue i's slot falls in the i-th of `count` equal
 * slot ranges, which is where a Cluster built with evenly split slots puts its i-th primary: with one
 * queue per primary, dispatch is spread over all of them. One queue keeps the tag `{dq}`.
 */
export function doorbellPrefix(prefix: string, index: number, count: number): string {
  if (count === 1) return `${prefix}:{dq}`;
  const low = Math.floor((index * CLUSTER_SLOTS) / count);
  const high = Math.floor(((index + 1) * CLUSTER_SLOTS) / count);
  for (let attempt = 0; ; attempt++) {
    const tag = attempt === 0 ? `dq${index}` : `dq${index}.${attempt}`;
    const slot = clusterSlot(`{${tag}}`);
    if (slot >= low && slot < high) return `${prefix}:{${tag}}`;
  }
}

/** Which doorbell queue rings the threads of a bucket. */
export function doorbellQueueOf(bucket: number, count: number): number {
  return bucket % count;
}

/** Job ids embed the epoch, which only grows, so an id is never reused and a duplicate add is a no-op. */
export function doorbellJobId(member: string, epoch: number): string {
  return `t-${member}-${epoch}`;
}

/**
 * A doorbell popped from a list: a worker's own (affinity) or a bucket's ready list. Those the enqueue
 * script pushes also say when (`at`, Redis's clock), which the sweeper reads off a ready list's head.
 */
export interface DirectDoorbell {
  thread: string;
  epoch: number;
}

/** A list item as a worker serves it (the enqueue script's `at` is the sweeper's alone). */
export function parseDirectDoorbell(item: string): DirectDoorbell {
  const { thread, epoch } = JSON.parse(item) as DirectDoorbell;
  return { thread, epoch };
}

/**
 * A doorbell list outlives its last push by this much: a worker's list is only useful until the
 * shared fallback rings, so the list of a worker that died disappears on its own; so does a ready list
 * nobody pops (the sweeper re-rings what it held, as for any lost doorbell).
 */
export const DIRECT_LIST_TTL_MS = 60_000;

export type DoorbellLayout = Pick<QueueConfig, 'prefix' | 'buckets' | 'doorbellQueues'>;

export class BullDoorbell implements Doorbell {
  /** Queue i rings the threads of the buckets b with b mod count = i; every worker consumes all. */
  readonly queues: readonly Queue<DoorbellData>[];
  private readonly scripts: Scripts;

  constructor(
    connection: RedisClient,
    private readonly layout: DoorbellLayout,
  ) {
    const { prefix, doorbellQueues } = layout;
    this.queues = Array.from(
      { length: doorbellQueues },
      (_, i) =>
        new Queue<DoorbellData>(DOORBELL_QUEUE, {
          connection,
          prefix: doorbellPrefix(prefix, i, doorbellQueues),
        }),
    );
    this.scripts = new Scripts(connection, [affinityPush]);
  }

  /** The queue that rings `thread`. */
  queueOf(thread: string): Queue<DoorbellData> {
    const { buckets, doorbellQueues } = this.layout;
    return this.queues[doorbellQueueOf(bucketOf(thread, buckets), doorbellQueues)]!;
  }

  /**
   * Rings the shared queue. With `prefer`, the doorbell is handed to that worker directly while the
   * shared one is added beside it, delayed by the affinity wait as its fallback; when the hand-over
   * does not happen (worker gone, shutting down, or Redis failing) the shared doorbell is promoted at
   * once. Both leave together, so the hand-over costs no round trip of its own. A worker quick enough
   * to claim and withdraw before the add lands leaves the fallback to fire: it then finds the thread
   * running (and, being a fallback, does nothing) or its epoch over (stale).
   */
  async ring(thread: string, member: string, epoch: number, options: RingOptions = {}): Promise<void> {
    const job = {
      jobId: doorbellJobId(member, epoch),
      removeOnComplete: true,
      removeOnFail: { count: 1_000 },
    };
    const queue = this.queueOf(thread);
    if (!('prefer' in options)) {
      const data = options.fallback ? { thread, epoch, fallback: true } : { thread, epoch };
      await queue.add('ring', data, { ...job, delay: options.delayMs ?? 0 });
      return;
    }
    const { owner, waitMs } = options.prefer;
    const [shared, handedOver] = await Promise.all([
      queue.add('ring', { thread, epoch, fallback: true }, { ...job, delay: waitMs }),
      this.handOver(owner, { thread, epoch }).catch(() => false),
    ]);
    if (handedOver) return;
    // Not delayed (any more) means it already runs or ran: nothing to promote.
    await shared.promote().catch(() => {});
  }

  /**
   * A job that rings no thread, on every doorbell queue: consuming one proves the BullMQ worker that
   * took it still consumes (see the worker's readiness canary). Idle workers are served in turn, so
   * each one gets some.
   */
  async addCanary(owner: string): Promise<void> {
    const jobId = `canary-${owner}-${Date.now()}`;
    const options = { removeOnComplete: true, removeOnFail: true, jobId };
    await Promise.all(this.queues.map((queue) => queue.add(CANARY_JOB, { thread: '', epoch: 0 }, options)));
  }

  /**
   * Reads the job's own hash: O(1) however long the queue is. (getJobState finds a waiting job by its
   * position in the wait list, an LPOS scan per call, which made the sweeper quadratic in the backlog.)
   * A completed doorbell is removed and a failed one is finished; in every other state it will run.
   */
  async pending(member: string, epoch: number): Promise<boolean> {
    const job = await this.queueOf(decodeThread(member)).getJob(doorbellJobId(member, epoch));
    return job !== undefined && !job.finishedOn;
  }

  async withdraw(member: string, epoch: number): Promise<void> {
    // A job already taken by another worker is locked and stays; it then finds the thread running.
    await this.queueOf(decodeThread(member))
      .remove(doorbellJobId(member, epoch))
      .catch(() => 0);
  }

  /** Doorbell jobs by state, summed over the queues. */
  async jobCounts(): Promise<Record<string, number>> {
    const counts = await Promise.all(
      this.queues.map((queue) => queue.getJobCounts('waiting', 'active', 'delayed', 'completed', 'failed')),
    );
    const total: Record<string, number> = {};
    for (const count of counts) {
      for (const [state, n] of Object.entries(count)) total[state] = (total[state] ?? 0) + n;
    }
    return total;
  }

  async close(): Promise<void> {
    await Promise.all(this.queues.map((queue) => queue.close()));
  }

  private async handOver(owner: string, doorbell: DirectDoorbell): Promise<boolean> {
    const keys = workerKeys(this.layout.prefix, owner);
    return this.scripts.run(affinityPush, keys, {
      doorbell: JSON.stringify(doorbell),
      ttlMs: DIRECT_LIST_TTL_MS,
    });
  }
}
