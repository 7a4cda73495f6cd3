import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { type LogSink, silentLogger } from '@tributary/observability';
import type { RedisClient } from './connections.js';
import { DoorbellIntake } from './doorbell-intake.js';
import type { Doorbell } from './doorbells.js';
import { Sweeper, type SweeperEvents } from './sweeper.js';
import type { ThreadQueue } from './thread-queue.js';
import { TurnAbortedError, type TurnEvents, type TurnHandler, TurnLoop } from './turn-loop.js';
import type { Presence } from './worker-presence.js';

export interface TurnRunnerOptions {
  queue: ThreadQueue;
  doorbell: Doorbell;
  /** Blocking connections (BullMQ's worker, direct doorbells) are duplicated from this one. */
  connection: RedisClient;
  handler: TurnHandler;
  /** Turns run at once by this process (agent sessions it may drive). */
  concurrency?: number;
  owner?: string;
  logger?: LogSink;
  /** Every worker sweeps by default; tests may turn it off to observe lost doorbells. */
  sweep?: boolean;
  /** What the runner reports for metrics and health. */
  events?: RunnerEvents;
  /** How the worker announces itself; default one refreshed from this event loop. */
  presence?: Presence;
}

export interface RunnerEvents extends TurnEvents, SweeperEvents {
  /** This runner's BullMQ worker of doorbell queue `queue` took a job (proof it still consumes). */
  doorbellTaken?(queue: number): void;
  /** A doorbell handed to this worker waited the affinity wait for a slot and went to the shared queue. */
  passedOn?(): void;
}

/** A worker's identity in leases and presence: its host, its pid and a few random bytes. */
export function newOwnerId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
}

/**
 * A worker's turns: doorbells in (DoorbellIntake), threads served under their lease (TurnLoop), and
 * the sweeper every worker runs. On close, running turns get a grace period, then hand their threads
 * back.
 */
export class TurnRunner {
  readonly owner: string;
  private readonly loop: TurnLoop;
  private readonly intake: DoorbellIntake;
  private readonly sweeper: Sweeper | undefined;
  private draining: Promise<void> | undefined;

  constructor(options: TurnRunnerOptions) {
    this.owner = options.owner ?? newOwnerId();
    const logger = options.logger ?? silentLogger;
    const { queue, doorbell, events } = options;
    this.loop = new TurnLoop({
      queue,
      handler: options.handler,
      owner: this.owner,
      logger,
      events,
    });
    this.intake = new DoorbellIntake({
      connection: options.connection,
      config: queue.config,
      owner: this.owner,
      concurrency: options.concurrency ?? 1,
      serve: (thread, epoch, onBusy) => this.loop.serve(thread, epoch, onBusy),
      passOn: async ({ thread, epoch }) => {
        await doorbell.ring(thread, queue.keys(thread).member, epoch);
        events?.passedOn?.();
      },
      logger,
      doorbellTaken: (queue) => events?.doorbellTaken?.(queue),
      ...(options.presence ? { presence: options.presence } : {}),
    });
    if (options.sweep !== false) {
      this.sweeper = new Sweeper(queue, options.connection, doorbell, this.owner, logger, events);
    }
  }

  async start(): Promise<void> {
    this.sweeper?.start();
    await this.intake.start();
  }

  /**
   * An operator's drain: stops taking doorbells and hands every running thread back at once (each
   * turn is aborted and its batch re-delivered elsewhere first), while the process stays up and its
   * sweeper keeps helping the fleet. It cannot be undone but by a restart.
   */
  drain(): Promise<void> {
    this.draining ??= (async () => {
      this.loop.stop();
      await this.intake.stopTaking();
      this.loop.abortAll();
      await this.intake.drained();
    })();
    return this.draining;
  }

  /**
   * Stops taking doorbells; turns that finish within `graceMs` commit, the rest are aborted and their
   * threads handed back (with a fresh epoch, so another worker claims them at once).
   */
  async close(graceMs = 0): Promise<void> {
    if (this.draining) {
      await this.draining;
      await this.sweeper?.stop();
      return;
    }
    this.loop.stop();
    await this.intake.stopTaking();
    const drained = this.intake.drained();
    if (graceMs > 0 && this.loop.running > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([drained, new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
      clearTimeout(timer);
    }
    this.loop.abortAll();
    await drained;
    await this.sweeper?.stop();
  }

  /**
   * Aborts every running turn and hands its thread back (fenced: a thread another worker took over
   * meanwhile is left alone); the runner goes on taking doorbells.
   */
  handBackAll(why: string): void {
    this.loop.abortAll(new TurnAbortedError('shutdown', why));
  }

  /** Turns running now (during a close: those not yet finished or handed back). */
  get running(): number {
    return this.loop.running;
  }

  /** Whether a doorbell could start a turn here now. */
  get hasFreeSlot(): boolean {
    return this.intake.hasFreeSlot;
  }
}
