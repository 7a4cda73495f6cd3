import { ConditionLog, type LogSink } from '@tributary/observability';
import { DelayedError, type Job, type Queue, Worker } from 'bullmq';
import { blockingConnection, type RedisClient } from '../connections.js';
import type { QueueConfig } from '../queue-config.js';
import { fleetKeys, workerKeys } from '../thread-keys.js';
import { type Presence, WorkerPresence } from '../worker-presence.js';
import { type ConsumerTiming, ConsumerWatch } from './consumer-watch.js';
import { DirectDoorbells } from './direct-doorbells.js';
import {
  type DirectDoorbell,
  DOORBELL_QUEUE,
  type DoorbellData,
  doorbellPrefix,
  doorbellQueue,
} from './doorbell.js';
import { SlotGate } from './slot-gate.js';
import { SpareCapacity } from './spare-capacity.js';

/** What to do when the claim finds another owner's live lease. */
export type OnBusy = (retryInMs: number) => Promise<void>;

/** Starts serving a thread from a doorbell; resolves when the worker no longer holds it. */
export type Serve = (thread: string, epoch: number, onBusy: OnBusy) => Promise<void>;

export interface DoorbellIntakeOptions {
  connection: RedisClient;
  config: Readonly<QueueConfig>;
  owner: string;
  /** The worker pool whose doorbell queues this worker consumes (docs/adr/0060). */
  pool: string;
  concurrency: number;
  serve: Serve;
  /** A shared doorbell this worker took to serve: its route's line moves up (docs/adr/0063). */
  taken(doorbell: DoorbellData): Promise<void>;
  /** Moving a line up failed (said at warn, once per condition). */
  lineStalled?(): void;
  /** Rings the shared queue with a doorbell this worker's own list held too long (pass-on). */
  passOn(doorbell: DirectDoorbell): Promise<void>;
  logger: LogSink;
  /** How often canaries are added, and how long a consumer may take nothing before the worker is not ready. */
  consumerTiming?: ConsumerTiming;
  /** This worker's consumer of doorbell queue `queue` took a job (a canary or a doorbell). */
  doorbellTaken?(queue: number): void;
  /** How the worker announces itself; default a WorkerPresence refreshed from this event loop. */
  presence?: Presence;
}

/**
 * Where a worker's turns come from (docs/adr/0051): the shared BullMQ doorbell queue and, with session
 * affinity, the doorbells handed to this worker, both drawing on one set of turn slots; while it takes
 * doorbells the worker announces itself to ringers (presence). A shared doorbell that finds every slot
 * busy goes back for other workers; a handed-over one waits in the worker's list for the next free
 * slot, and is passed on to the shared queue once it has waited the affinity wait.
 */
export class DoorbellIntake {
  /** One BullMQ worker per doorbell queue, all drawing on the one slot gate; replaced when stalled. */
  private readonly workers: Worker<DoorbellData>[];
  /** Each BullMQ worker's own connection: one that a failover broke must not stall the others. */
  private readonly workerConnections = new Map<Worker<DoorbellData>, RedisClient>();
  /** A handle per doorbell queue, to add canaries to and count its waiting jobs. */
  private readonly handles: Queue<DoorbellData>[];
  private readonly watch: ConsumerWatch;
  private readonly errors: ConditionLog;
  private readonly lineErrors: ConditionLog;
  private readonly gate: SlotGate;
  private readonly presence: Presence;
  private readonly spare: SpareCapacity;
  private readonly direct: DirectDoorbells | undefined;
  /** Every turn started here, whichever consumer took its doorbell: a replaced one is closed without waiting. */
  private readonly turns = new Set<Promise<void>>();
  private closed: Promise<void> = Promise.resolve();

  constructor(private readonly options: DoorbellIntakeOptions) {
    const { config, concurrency, logger } = options;
    this.errors = new ConditionLog(logger, 'doorbell worker error');
    // The line lets in again as the sweeper finds its threads waiting (BullDoorbell.pending).
    this.lineErrors = new ConditionLog(logger, "a route's line did not move up; the sweeper moves it");
    const queues = Array.from({ length: config.doorbellQueues }, (_, i) => i);
    this.workers = queues.map((i) => this.newWorker(i));
    this.handles = queues.map((i) => doorbellQueue(options.connection, config, i, options.pool));
    this.watch = new ConsumerWatch(
      this.handles,
      options.owner,
      (queue) => this.replaceConsumer(queue),
      logger,
      options.consumerTiming,
    );
    const keys = workerKeys(config.prefix, options.owner);
    this.presence =
      options.presence ??
      new WorkerPresence(options.connection, keys, config.presenceTtlMs, config.affinity, logger);
    this.gate = new SlotGate(concurrency);
    this.spare = new SpareCapacity(
      options.connection,
      fleetKeys(config.prefix).spare,
      options.owner,
      this.gate,
      logger,
    );
    if (!config.affinity) return;
    this.direct = new DirectDoorbells(
      blockingConnection(options.connection),
      keys.doorbells,
      this.gate,
      {
        onDoorbell: (doorbell) => this.handedOver(doorbell),
        passOn: options.passOn,
        othersHaveRoom: () => this.spare.othersHaveRoom(),
        affinityWaitMs: config.affinityWaitMs,
      },
      logger,
    );
  }

  async start(): Promise<void> {
    // Alive before the first claim, or the sweeper would take the thread straight back.
    this.presence.start();
    for (const worker of this.workers) void worker.run();
    await Promise.all(this.workers.map((worker) => worker.waitUntilReady()));
    this.direct?.start();
    this.spare.start();
    this.watch.start(() => this.gate.hasFree);
  }

  /** Whether every doorbell queue's consumer still takes jobs (readiness; see ConsumerWatch). */
  consuming(): boolean {
    return this.watch.consuming();
  }

  /** Whether a doorbell could start a turn here now. */
  get hasFreeSlot(): boolean {
    return this.gate.hasFree;
  }

  /**
   * Starts no turn until `resumeTaking`: shared doorbells go back for other workers, the worker's own
   * wait in its list (passed on once overdue if another worker has room).
   */
  pauseTaking(): void {
    this.gate.pause();
  }

  resumeTaking(): void {
    this.gate.resume();
  }

  /**
   * Takes no more doorbells; ringers use the shared queue from now on. The worker stays present until
   * drained, so the sweeper leaves the threads of its finishing turns alone.
   */
  async stopTaking(): Promise<void> {
    this.watch.stop();
    await this.spare.stop();
    await this.presence.retire();
    // The consumers stop first, so the doorbells the lists pass on at their stop go to other workers.
    this.closed = Promise.all(this.workers.map((worker) => worker.close())).then(() => {});
    await this.direct?.stop();
    this.gate.wakeAll();
  }

  /** After `stopTaking`: resolves once every turn it started has ended, then closes its connection. */
  async drained(): Promise<void> {
    await Promise.all([this.closed, Promise.all(this.turns)]);
    await this.presence.stop();
    await Promise.all(this.handles.map((handle) => handle.close()));
    for (const connection of this.workerConnections.values()) connection.disconnect();
  }

  private newWorker(queue: number): Worker<DoorbellData> {
    const { config, concurrency } = this.options;
    const connection = blockingConnection(this.options.connection);
    const worker = new Worker<DoorbellData>(
      DOORBELL_QUEUE,
      (job, token) => this.tracked(this.fromQueue(queue, job, token)),
      {
        connection,
        prefix: doorbellPrefix(config.prefix, queue, config.doorbellQueues, this.options.pool),
        concurrency,
        // Our lease, not BullMQ's job lock, decides who owns a thread; a stalled doorbell is only
        // delivered again, which the claim script turns into a no-op or a wait for the lease.
        maxStalledCount: Number.MAX_SAFE_INTEGER,
        autorun: false,
      },
    );
    worker.on('error', (error) => this.errors.report(error));
    this.workerConnections.set(worker, connection);
    return worker;
  }

  /** Replaces queue `queue`'s consumer by a new one on a new connection; the old one is closed without waiting. */
  private replaceConsumer(queue: number): void {
    const worker = this.workers[queue]!;
    const replacement = this.newWorker(queue);
    this.workers[queue] = replacement;
    void replacement.run();
    const connection = this.workerConnections.get(worker);
    this.workerConnections.delete(worker);
    void worker
      .close(true)
      .catch((error: unknown) => this.errors.report(error))
      .finally(() => connection?.disconnect());
  }

  private async fromQueue(queue: number, job: Job<DoorbellData>, token?: string): Promise<void> {
    // A job taken proves the consumers work again: a failure reported before is logged as cleared.
    this.errors.cleared();
    this.options.doorbellTaken?.(queue);
    if (this.watch.taken(queue, job.name)) return;
    if (!this.gate.tryAcquire()) return this.handBack(job, token);
    const { thread, epoch, fallback } = job.data;
    const moved = this.options.taken(job.data).then(
      () => this.lineErrors.cleared(),
      (error: unknown) => {
        this.options.lineStalled?.();
        this.lineErrors.report(error);
      },
    );
    try {
      await this.options.serve(thread, epoch, async (retryInMs) => {
        // A twin an older version added beside a direct doorbell, finding the thread running.
        if (fallback) return;
        // Another owner's lease is live: look again when it would have expired.
        await job.moveToDelayed(Date.now() + retryInMs + 1, token);
        throw new DelayedError();
      });
    } finally {
      this.gate.release();
      await moved;
    }
  }

  /** All slots are taken by direct turns: the doorbell goes back to the queue for other workers. */
  private async handBack(job: Job<DoorbellData>, token?: string): Promise<void> {
    await job.moveToDelayed(Date.now(), token);
    // Taking another job before a slot frees would only hand it back too.
    await this.gate.whenFree();
    throw new DelayedError();
  }

  /** A doorbell popped from this worker's own list, with its slot already acquired. */
  private handedOver({ thread, epoch }: DirectDoorbell): void {
    const turn = this.options
      .serve(thread, epoch, async () => {})
      .catch((error: unknown) => this.options.logger.warn({ err: error, thread }, 'doorbell failed'))
      .finally(() => this.gate.release());
    this.tracked(turn);
  }

  private tracked(turn: Promise<void>): Promise<void> {
    this.turns.add(turn);
    void turn.finally(() => this.turns.delete(turn)).catch(() => {});
    return turn;
  }
}
