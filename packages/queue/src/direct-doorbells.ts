import { ConditionLog, type LogSink, silentLogger } from '@tributary/observability';
import type { RedisClient } from './connections.js';
import { DIRECT_LIST_TTL_MS, type DirectDoorbell, parseDirectDoorbell } from './doorbells.js';
import { passOn } from './lua/queue-calls.js';
import { Scripts } from './lua/scripts.js';
import type { SlotGate } from './slot-gate.js';

const POP_TIMEOUT_SECONDS = 1;
const RETRY_AFTER_ERROR_MS = 1_000;
/** The pass-on check runs every half affinity wait, but no more often than this. */
const MIN_PASS_ON_TICK_MS = 50;

/** The lists a worker pops: its own (session affinity) and the buckets' ready lists, each optional. */
export interface DoorbellLists {
  own?: string;
  ready: readonly string[];
}

/** Which list a doorbell came from: the worker's own (`direct`) or a bucket's ready list. */
export type ListSource = 'direct' | 'ready';

export interface DirectDoorbellHandlers {
  /** Called with a slot acquired; the callee releases it. */
  onDoorbell(doorbell: DirectDoorbell, source: ListSource): void;
  /** Rings the shared queue with a doorbell of the worker's own list that waited too long. */
  passOn(doorbell: DirectDoorbell): Promise<void>;
  /**
   * Whether a worker could serve a passed-on doorbell sooner than this one: only then is moving a
   * thread (a new agent session elsewhere) cheaper than letting it wait here.
   */
  othersHaveRoom(): Promise<boolean>;
  /** How long a doorbell of the worker's own list may wait for a slot before it is passed on. */
  affinityWaitMs: number;
}

/**
 * Pops doorbells from lists while the worker has a free slot, one at a time: first those handed to
 * this worker (session affinity), then any bucket's ready list (rings nobody prefers, pushed by the
 * enqueue script). Each runs in the next free slot; one this worker cannot run goes back to the head
 * of its list. While every slot is busy, the doorbells of its own list that waited the affinity wait
 * are passed on to the shared queue if another worker has a slot to spare (else they wait here, where
 * their sessions are), and all of them when the worker stops: only this worker reads that list. What a worker that died or froze leaves in a list (or popped before its claim) is
 * re-rung by the sweeper.
 */
export class DirectDoorbells {
  private stopped = false;
  private loop: Promise<void> = Promise.resolve();
  private readonly errors: ConditionLog;
  /** Where the next pop starts among the ready lists: BLPOP takes the first non-empty key it is given. */
  private nextReady = 0;
  private readonly scripts: Scripts;

  /** `connection` is used for these lists only and is disconnected by `stop`. */
  constructor(
    private readonly connection: RedisClient,
    private readonly lists: DoorbellLists,
    private readonly gate: SlotGate,
    private readonly handlers: DirectDoorbellHandlers,
    private readonly logger: LogSink = silentLogger,
  ) {
    this.errors = new ConditionLog(logger, 'direct doorbells unreachable; retrying');
    this.scripts = new Scripts(connection, [passOn]);
  }

  start(): void {
    this.loop = this.run();
  }

  /**
   * Within a pop's timeout: a pop in flight is let finish, so what it takes can go back; then what the
   * worker's own list holds is passed on (ringers no longer hand it doorbells: it has retired).
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.gate.wakeAll();
    await this.loop;
    await this.passOnOverdue(0);
    this.connection.disconnect();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      await this.untilFree();
      if (this.stopped) return;
      let popped: [string, string] | null;
      try {
        popped = await this.connection.blpop(...this.popOrder(), POP_TIMEOUT_SECONDS);
      } catch (error) {
        if (this.stopped) return;
        this.errors.report(error);
        await new Promise((resolve) => setTimeout(resolve, RETRY_AFTER_ERROR_MS));
        continue;
      }
      this.errors.cleared();
      if (!popped) continue;
      const [list, item] = popped;
      const source = list === this.lists.own ? 'direct' : 'ready';
      if (source === 'ready') this.servedReady(list);
      // Stopping, or a shared doorbell took the slot meanwhile: back to the head of its list, where it
      // keeps its place (and its age: a direct one is passed on once it waited too long).
      if (this.stopped || !this.gate.tryAcquire()) {
        await this.putBack(list, item);
        continue;
      }
      this.handlers.onDoorbell(parseDirectDoorbell(item), source);
    }
  }

  /**
   * Waits for a free slot; meanwhile, every half affinity wait (a clock that slots freeing and being
   * taken again do not restart), passes on the doorbells of the own list that waited the whole wait.
   */
  private async untilFree(): Promise<void> {
    // Only ready lists: nothing of this worker's own to pass on.
    if (this.lists.own === undefined) return this.gate.whenFree();
    const { affinityWaitMs } = this.handlers;
    const tickMs = Math.max(MIN_PASS_ON_TICK_MS, affinityWaitMs / 2);
    let nextTick = performance.now() + tickMs;
    let free = this.gate.whenFree();
    while (!this.gate.hasFree && !this.stopped) {
      let timer: NodeJS.Timeout | undefined;
      const tick = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), Math.max(0, nextTick - performance.now()));
      });
      const ticked = await Promise.race([free.then(() => false), tick]);
      clearTimeout(timer);
      if (!ticked) {
        // A slot freed (or shutdown woke us); if it was taken again at once, wait for the next one.
        free = this.gate.whenFree();
        continue;
      }
      nextTick += tickMs;
      if (!this.stopped && (await this.othersHaveRoom())) await this.passOnOverdue(affinityWaitMs);
    }
  }

  /** A failed check keeps the doorbells here: waiting is always safe, moving is an optimisation. */
  private async othersHaveRoom(): Promise<boolean> {
    try {
      return await this.handlers.othersHaveRoom();
    } catch (error) {
      this.errors.report(error);
      return false;
    }
  }

  /** Best effort: a doorbell not passed on stays in the list, and the sweeper finds its thread. */
  private async passOnOverdue(waitMs: number): Promise<void> {
    if (this.lists.own === undefined) return;
    try {
      const items = await this.scripts.run(passOn, { doorbells: this.lists.own }, { waitMs });
      for (const item of items) {
        const doorbell = parseDirectDoorbell(item);
        await this.handlers.passOn(doorbell).catch((error: unknown) => {
          this.logger.warn(
            { err: error, thread: doorbell.thread },
            'doorbell not passed on; the sweeper re-rings it',
          );
        });
      }
    } catch (error) {
      this.errors.report(error);
    }
  }

  /** Best effort: a doorbell lost here is the sweeper's, like any lost doorbell. */
  private async putBack(list: string, item: string): Promise<void> {
    try {
      await this.connection.multi().lpush(list, item).pexpire(list, DIRECT_LIST_TTL_MS).exec();
    } catch (error) {
      this.errors.report(error);
    }
  }

  /**
   * The worker's own list first, then the ready lists from the one after the last served: round robin
   * over the buckets with doorbells, so a busy bucket cannot starve the next one.
   */
  private popOrder(): string[] {
    const { own, ready } = this.lists;
    const start = this.nextReady;
    const order = [...ready.slice(start), ...ready.slice(0, start)];
    return own === undefined ? order : [own, ...order];
  }

  private servedReady(list: string): void {
    this.nextReady = (this.lists.ready.indexOf(list) + 1) % this.lists.ready.length;
  }
}
