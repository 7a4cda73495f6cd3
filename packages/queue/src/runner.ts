import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { type LogSink, silentLogger } from '@tributary/observability';
import type { RedisClient } from './connections.js';
import { DeadRetention } from './dead-retention.js';
import { PostedParts } from './posted-parts.js';
import { DEFAULT_POOL, deadBounds } from './queue-config.js';
import { DEFAULT_DELIVERY, type DeliveryOptions, type DeliveryOutcome, ReplyLoop } from './reply-loop.js';
import type { ReplyRetryPolicy } from './reply-retry-policy.js';
import type { ReplySink } from './reply-sink.js';
import { recentKeysOf } from './stores/keys-of.js';
import { ReplyOutbox } from './stores/reply-outbox.js';
import { Sweeper, type SweeperEvents } from './sweeper.js';
import type { ThreadQueue } from './threads/thread-queue.js';
import { TurnAbortedError, type TurnEvents, type TurnHandler, TurnLoop } from './turn-loop.js';
import type { ConsumerTiming } from './wake/consumer-watch.js';
import type { Doorbell } from './wake/doorbell.js';
import { DoorbellIntake } from './wake/doorbell-intake.js';
import type { Presence } from './worker-presence.js';

/** Reply delivery tuning; the retry horizon and longest backoff step are the operator's. */
export type DeliveryTuning = Partial<Omit<DeliveryOptions, 'retry'>> & { retry?: Partial<ReplyRetryPolicy> };

export interface RunnerOptions {
  queue: ThreadQueue;
  doorbell: Doorbell;
  /** Blocking connections (BullMQ's worker, direct doorbells) are duplicated from this one. */
  connection: RedisClient;
  /** Runs each turn. */
  handler: TurnHandler;
  /** Delivers each reply the turns committed. */
  replies: ReplySink;
  /**
   * What this process knows to be posted of each reply; shared with whatever else posts a reply's
   * parts (a streamed placeholder). Default: the runner's own.
   */
  parts?: PostedParts;
  delivery?: DeliveryTuning;
  /** Turns run at once by this process (agent sessions it may drive). */
  concurrency?: number;
  /** The worker pool whose threads this worker serves (docs/adr/0060); default the default pool. */
  pool?: string;
  owner?: string;
  logger?: LogSink;
  /** Every worker sweeps by default; tests may turn it off to observe lost doorbells. */
  sweep?: boolean;
  /** What the runner reports for metrics and health; nothing it does waits on them. */
  events?: RunnerEvents;
  /** How the worker announces itself; default one refreshed from this event loop. */
  presence?: Presence;
  /** How its doorbell consumers are watched (canaries, readiness); the defaults suit production. */
  consumerTiming?: ConsumerTiming;
}

export interface RunnerEvents extends TurnEvents, SweeperEvents {
  /** This runner's consumer of doorbell queue `queue` took a job (a canary or a doorbell). */
  doorbellTaken?(queue: number): void;
  /** A route's line did not move up as its doorbell was taken (docs/adr/0063). */
  lineStalled?(): void;
  /** A doorbell handed to this worker waited the affinity wait for a slot and went to the shared queue. */
  passedOn?(): void;
  /** An attempt to deliver a reply ended so. */
  replyDelivery?(outcome: DeliveryOutcome): void;
}

/** A worker's identity in leases and presence: its host, its pid and a few random bytes. */
export function newOwnerId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
}

/**
 * A worker's two per-thread loops and what feeds them: doorbells in (DoorbellIntake), threads served
 * under their lease (TurnLoop), the replies their commits put in the outbox delivered (ReplyLoop), and
 * the sweeper every worker runs, which also offers the replies due. The worker brings the turn handler
 * and the reply sink. On close, running turns get a grace period, then hand their threads back; the
 * replies they committed are delivered before the reply loop stops.
 */
export class Runner {
  readonly owner: string;
  private readonly turns: TurnLoop;
  private readonly replies: ReplyLoop;
  private readonly intake: DoorbellIntake;
  private readonly sweeper: Sweeper | undefined;
  /** Runs where the sweeper does: every worker trims the dead sets (docs/adr/0043). */
  private readonly retention: DeadRetention | undefined;
  private draining: Promise<void> | undefined;

  constructor(options: RunnerOptions) {
    this.owner = options.owner ?? newOwnerId();
    const logger = options.logger ?? silentLogger;
    const { queue, doorbell, events } = options;
    const keysOf = recentKeysOf(queue.config.prefix, queue.config.buckets);
    const parts =
      options.parts ?? new PostedParts(new ReplyOutbox(options.connection, keysOf, deadBounds(queue.config)));
    const { retry, ...delivery } = options.delivery ?? {};
    this.replies = new ReplyLoop({
      outbox: parts.outbox,
      parts,
      sink: options.replies,
      owner: this.owner,
      delivery: { ...DEFAULT_DELIVERY, ...delivery, retry: { ...DEFAULT_DELIVERY.retry, ...retry } },
      logger,
      onOutcome: (outcome) => events?.replyDelivery?.(outcome),
    });
    this.turns = new TurnLoop({
      turns: queue.turns,
      config: queue.config,
      handler: options.handler,
      replies: this.replies,
      owner: this.owner,
      logger,
      ...(events ? { events } : {}),
    });
    this.intake = new DoorbellIntake({
      connection: options.connection,
      config: queue.config,
      owner: this.owner,
      pool: options.pool ?? DEFAULT_POOL,
      concurrency: options.concurrency ?? 1,
      serve: (thread, epoch, onBusy) => this.turns.serve(thread, epoch, onBusy),
      taken: (data) => doorbell.taken(data, options.pool ?? DEFAULT_POOL),
      lineStalled: () => events?.lineStalled?.(),
      passOn: async ({ thread, epoch }) => {
        await doorbell.ring(thread, keysOf(thread).member, epoch);
        events?.passedOn?.();
      },
      logger,
      doorbellTaken: (queue) => events?.doorbellTaken?.(queue),
      ...(options.presence ? { presence: options.presence } : {}),
      ...(options.consumerTiming ? { consumerTiming: options.consumerTiming } : {}),
    });
    if (options.sweep !== false) {
      const offer = (threads: string[]) => this.replies.offer(threads);
      this.sweeper = new Sweeper(queue.sweep, doorbell, this.owner, offer, logger, events);
      this.retention = new DeadRetention(queue.config, options.connection, logger);
    }
  }

  async start(): Promise<void> {
    this.sweeper?.start();
    this.retention?.start();
    await this.intake.start();
  }

  /**
   * An operator's drain: stops taking doorbells and hands every running thread back at once (each
   * turn is aborted and its batch re-delivered elsewhere first), while the process stays up and its
   * sweeper and reply loop keep helping the fleet. It cannot be undone but by a restart.
   */
  drain(): Promise<void> {
    this.draining ??= (async () => {
      this.turns.stop();
      await this.intake.stopTaking();
      this.turns.abortAll();
      await this.intake.drained();
    })();
    return this.draining;
  }

  /**
   * Stops taking doorbells; turns that finish within `graceMs` commit, the rest are aborted and their
   * threads handed back (with a fresh epoch, so another worker claims them at once). Then the reply
   * loop stops: deliveries in flight end, what is left waits in Redis for the other workers.
   */
  async close(graceMs = 0): Promise<void> {
    if (this.draining) await this.draining;
    else await this.closeTurns(graceMs);
    await this.sweeper?.stop();
    await this.retention?.stop();
    await this.replies.stop();
  }

  private async closeTurns(graceMs: number): Promise<void> {
    this.turns.stop();
    await this.intake.stopTaking();
    const drained = this.intake.drained();
    if (graceMs > 0 && this.turns.running > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([drained, new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
      clearTimeout(timer);
    }
    this.turns.abortAll();
    await drained;
  }

  /**
   * Aborts every running turn and hands its thread back (fenced: a thread another worker took over
   * meanwhile is left alone); the runner goes on taking doorbells.
   */
  handBackAll(why: string): void {
    this.turns.abortAll(new TurnAbortedError('shutdown', why));
  }

  /**
   * Takes no new doorbells until `resumeTaking` (this worker cannot run turns now: its agent does not
   * start); running turns go on, and the sweeper and reply loop keep helping the fleet.
   */
  pauseTaking(): void {
    this.intake.pauseTaking();
  }

  resumeTaking(): void {
    this.intake.resumeTaking();
  }

  /** Turns running now (during a close: those not yet finished or handed back). */
  get running(): number {
    return this.turns.running;
  }

  /** Whether a doorbell could start a turn here now. */
  get hasFreeSlot(): boolean {
    return this.intake.hasFreeSlot;
  }

  /** Whether every doorbell queue's consumer still takes jobs (readiness). */
  consuming(): boolean {
    return this.intake.consuming();
  }
}
