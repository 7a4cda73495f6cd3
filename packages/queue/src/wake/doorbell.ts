import { Queue } from 'bullmq';
import { CLUSTER_SLOTS, clusterSlot } from '../cluster-slot.js';
import type { RedisClient } from '../connections.js';
import { affinityPush } from '../lua/queue-calls.js';
import type { LetIn } from '../lua/route-line-calls.js';
import { Scripts } from '../lua/scripts.js';
import { DEFAULT_POOL, type QueueConfig } from '../queue-config.js';
import { bucketOf, decodeThread, encodeThread, workerKeys } from '../thread-keys.js';
import { DEFAULT_PLACE, type LineTiming, RouteLines, type ThreadPlace } from './route-lines.js';

/** What a doorbell job carries: which thread to claim, under which epoch. */
export interface DoorbellData {
  thread: string;
  epoch: number;
  /**
   * Set by older versions on a shared doorbell that twinned one handed to a preferred worker: finding
   * the thread running (normally there) it does nothing instead of waiting for the lease. Nothing sets
   * it any more (the preferred worker passes an overdue doorbell on itself); it is read so that twins
   * added during a rolling upgrade still behave.
   */
  fallback?: boolean;
  /** The route whose line let it in (docs/adr/0063); absent on a delayed ring, which passed no line. */
  route?: string;
}

/**
 * A ring of the shared queue, delayed or not (a failed batch's retry), or one handed to a preferred
 * worker while it is there (session affinity, docs/adr/0051).
 */
export type RingOptions = { delayMs?: number; prefer?: undefined } | { prefer: { owner: string } };

/** The doorbell transport the queue rings through; the chaos test wraps it to lose some on purpose. */
export interface Doorbell {
  ring(thread: string, member: string, epoch: number, options?: RingOptions): Promise<void>;
  /** True while the shared doorbell for this epoch is still in its route's line, waiting, delayed or running. */
  pending(member: string, epoch: number): Promise<boolean>;
  /** A worker of `pool` took a shared doorbell off the queue to serve it: its route's line moves up. */
  taken(doorbell: DoorbellData, pool: string): Promise<void>;
}

export const DOORBELL_QUEUE = 'doorbell';

/** The name of canary jobs on the doorbell queues. */
export const CANARY_JOB = 'canary';

/**
 * The BullMQ prefix of doorbell queue `index` of `count` of a worker pool (docs/adr/0060). Each queue's
 * keys share one hash tag, so it lives on one Cluster slot; the tags are chosen so queue i's slot falls
 * in the i-th of `count` equal slot ranges, which is where a Cluster built with evenly split slots puts
 * its i-th primary: with one queue per primary, dispatch is spread over all of them. The default pool's
 * queues keep the tags they had before pools (`{dq}`, `{dq0}` …), so an upgrade strands no doorbell;
 * another pool's tags carry its name.
 */
export function doorbellPrefix(prefix: string, index: number, count: number, pool = DEFAULT_POOL): string {
  const base = pool === DEFAULT_POOL ? 'dq' : `dq.${pool}`;
  if (count === 1) return `${prefix}:{${base}}`;
  const low = Math.floor((index * CLUSTER_SLOTS) / count);
  const high = Math.floor(((index + 1) * CLUSTER_SLOTS) / count);
  const first = pool === DEFAULT_POOL ? `${base}${index}` : `${base}.${index}`;
  for (let attempt = 0; ; attempt++) {
    const tag = attempt === 0 ? first : `${first}.${attempt}`;
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
 * A doorbell handed to a worker (session affinity), as its own list holds it. Each item also says when
 * it was pushed (`at`, Redis's clock): a busy worker passes on the items that waited past the affinity
 * wait (pass-on).
 */
export interface DirectDoorbell {
  thread: string;
  epoch: number;
}

/** A list item as a worker serves it (`at` is for the scripts alone). */
export function parseDirectDoorbell(item: string): DirectDoorbell {
  const { thread, epoch } = JSON.parse(item) as DirectDoorbell;
  return { thread, epoch };
}

/**
 * A worker's list outlives its last push by this much, so the list of a worker that died disappears on
 * its own. The sweeper re-rings what it held, as for any lost doorbell.
 */
export const DIRECT_LIST_TTL_MS = 60_000;

export type DoorbellLayout = Pick<QueueConfig, 'prefix' | 'buckets' | 'doorbellQueues'>;

/**
 * A BullMQ queue handle for doorbell queue `index` of `pool`, on a connection the caller owns. BullMQ's version
 * check sends INFO once, right after connecting, and keeps a failure of it for the handle's life: one
 * refused or timed-out INFO at start-up left every later call on the handle failing, which showed as
 * fleet gauges reading NaN for an ingress's whole life while its enqueues (which need no BullMQ)
 * worked. Without the check the handle only waits for the connection, which recovers on its own.
 */
export function doorbellQueue(
  connection: RedisClient,
  layout: DoorbellLayout,
  index: number,
  pool = DEFAULT_POOL,
) {
  return new Queue<DoorbellData>(DOORBELL_QUEUE, {
    connection,
    prefix: doorbellPrefix(layout.prefix, index, layout.doorbellQueues, pool),
    skipVersionCheck: true,
  });
}

/** A sweep asks after each thread of a long line; the line itself is looked at this often at most. */
const MOVE_ON_EVERY_MS = 1_000;

/** Where a thread's doorbells ring: its route's pool (docs/adr/0060) and its route's line (0063). */
export type PlaceOf = (thread: string) => Promise<ThreadPlace>;

export class BullDoorbell implements Doorbell {
  /** Each pool's queues, opened at its first ring: queue i rings the threads of the buckets b with b mod count = i. */
  private readonly pools = new Map<string, readonly Queue<DoorbellData>[]>();
  private readonly scripts: Scripts;
  private readonly lines: RouteLines;
  /** When each line (`pool/route`) was last moved on here: once a second is enough for a whole line. */
  private readonly movedOn = new Map<string, number>();
  private closed = false;

  constructor(
    private readonly connection: RedisClient,
    private readonly layout: DoorbellLayout,
    /** Default: every thread is the default route's, in the default pool. */
    private readonly placeOf: PlaceOf = async () => DEFAULT_PLACE,
    lineTiming: Partial<LineTiming> = {},
  ) {
    this.scripts = new Scripts(connection, [affinityPush]);
    this.lines = new RouteLines(connection, layout.prefix, lineTiming);
  }

  /** The doorbell queues of `pool`; every worker of the pool consumes all of them. */
  queues(pool = DEFAULT_POOL): readonly Queue<DoorbellData>[] {
    let queues = this.pools.get(pool);
    if (queues === undefined) {
      // A handle opened on a closing connection would report its errors to nobody.
      if (this.closed) throw new Error('the doorbell is closed');
      queues = Array.from({ length: this.layout.doorbellQueues }, (_, i) =>
        doorbellQueue(this.connection, this.layout, i, pool),
      );
      this.pools.set(pool, queues);
    }
    return queues;
  }

  /**
   * Rings the shared queue of the thread's pool, through its route's line unless delayed (a retry or a
   * put-back enters the queue as its delay ends; BullMQ moves it there, past any line). With `prefer`,
   * the doorbell is handed to that worker instead while it is there and taking doorbells; it runs in
   * that worker's next free slot, or is passed on to the shared queue by that worker after the affinity
   * wait. When the hand-over does not happen (worker gone, shutting down, or Redis failing) the shared
   * queue is rung at once.
   */
  async ring(thread: string, member: string, epoch: number, options: RingOptions = {}): Promise<void> {
    const { prefer } = options;
    if (prefer && (await this.handOver(prefer.owner, thread, epoch).catch(() => false))) return;
    const place = await this.placeOf(thread);
    const delayMs = prefer ? 0 : (options.delayMs ?? 0);
    if (delayMs > 0) return this.add(place, { member, epoch }, delayMs);
    await this.letIn(place, await this.lines.ring(place, member, epoch));
  }

  /** The queue that rings `thread`, in its pool. */
  async queueOf(thread: string): Promise<Queue<DoorbellData>> {
    return this.queueIn(await this.placeOf(thread), thread);
  }

  async taken({ thread, epoch, route }: DoorbellData, pool: string): Promise<void> {
    // A doorbell rung before lines, or delayed, took no place in one.
    if (route === undefined) return;
    const place = { pool, route };
    await this.letIn(place, await this.lines.move(place, [{ member: encodeThread(thread), epoch }]));
  }

  /** A turn slot of the thread's route was freed: its line lets in what there is room for now (0064). */
  async moveLine(thread: string): Promise<void> {
    const place = await this.placeOf(thread);
    await this.letIn(place, await this.lines.move(place, []));
  }

  /**
   * Rings at once a doorbell that waits out a delay (a put-back batch's): a thread whose wait ended
   * early, as when a slot of its route was freed (docs/adr/0062). `rung`: it was (or is now) ringing
   * anyway; `none`: there is no such doorbell (yet).
   */
  async promote(member: string, epoch: number): Promise<'rung' | 'none'> {
    const thread = decodeThread(member);
    const job = await (await this.queueOf(thread)).getJob(doorbellJobId(member, epoch));
    if (job === undefined) return 'none';
    try {
      if (await job.isDelayed()) await job.promote();
    } catch (error) {
      // Its delay ran out between the two calls: it rings by itself.
      if (await job.isDelayed()) throw error;
    }
    return 'rung';
  }

  /**
   * Reads the job's own hash: O(1) however long the queue is. (getJobState finds a waiting job by its
   * position in the wait list, an LPOS scan per call, which made the sweeper quadratic in the backlog.)
   * A completed doorbell is removed and a failed one is finished; in every other state it will run. A
   * doorbell in its route's line is pending too, and the sweeper asking after it moves the line on.
   */
  async pending(member: string, epoch: number): Promise<boolean> {
    const place = await this.placeOf(decodeThread(member));
    if (await this.inQueue(place, member, epoch)) return true;
    if (!(await this.lines.holds(place, member, epoch))) return false;
    await this.moveOn(place);
    return true;
  }

  /** Doorbell jobs of `pool` by state, summed over its queues. */
  async jobCounts(pool = DEFAULT_POOL): Promise<Record<string, number>> {
    const counts = await Promise.all(
      this.queues(pool).map((queue) =>
        queue.getJobCounts('waiting', 'active', 'delayed', 'completed', 'failed'),
      ),
    );
    const total: Record<string, number> = {};
    for (const count of counts) {
      for (const [state, n] of Object.entries(count)) total[state] = (total[state] ?? 0) + n;
    }
    return total;
  }

  /** Doorbells of `pool` waiting in their routes' lines, not yet in its queues. */
  lined(pool = DEFAULT_POOL): Promise<number> {
    return this.lines.lined(pool);
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.pools.values()].flat().map((queue) => queue.close()));
  }

  private async handOver(owner: string, thread: string, epoch: number): Promise<boolean> {
    const keys = workerKeys(this.layout.prefix, owner);
    return this.scripts.run(affinityPush, keys, { thread, epoch, ttlMs: DIRECT_LIST_TTL_MS });
  }

  /** The queue of `place`'s pool that rings `thread`. */
  private queueIn(place: ThreadPlace, thread: string): Queue<DoorbellData> {
    const { buckets, doorbellQueues } = this.layout;
    return this.queues(place.pool)[doorbellQueueOf(bucketOf(thread, buckets), doorbellQueues)]!;
  }

  private async inQueue(place: ThreadPlace, member: string, epoch: number): Promise<boolean> {
    const job = await this.queueIn(place, decodeThread(member)).getJob(doorbellJobId(member, epoch));
    return job !== undefined && !job.finishedOn;
  }

  /**
   * Moves on a line whose doorbells let in may have left the queue untaken: lost before their add, or
   * served by a worker of a version before lines, which does not say so. Those are forgotten and the
   * line lets in what there is room for.
   */
  private async moveOn(place: ThreadPlace): Promise<void> {
    const line = `${place.pool}/${place.route}`;
    if (Date.now() - (this.movedOn.get(line) ?? 0) < MOVE_ON_EVERY_MS) return;
    this.movedOn.set(line, Date.now());
    const letIn = await this.lines.letIn(place);
    const present = await Promise.all(letIn.map(({ member, epoch }) => this.inQueue(place, member, epoch)));
    const gone = letIn.filter((_, i) => !present[i]);
    await this.letIn(place, await this.lines.move(place, gone));
  }

  /** Adds the doorbells a line let in to the shared queue. */
  private async letIn(place: ThreadPlace, due: readonly LetIn[]): Promise<void> {
    await Promise.all(due.map((doorbell) => this.add(place, doorbell, 0)));
  }

  private async add(place: ThreadPlace, { member, epoch }: LetIn, delayMs: number): Promise<void> {
    const thread = decodeThread(member);
    await this.queueIn(place, thread).add(
      'ring',
      delayMs > 0 ? { thread, epoch } : { thread, epoch, route: place.route },
      {
        jobId: doorbellJobId(member, epoch),
        delay: delayMs,
        removeOnComplete: true,
        removeOnFail: { count: 1_000 },
      },
    );
  }
}
