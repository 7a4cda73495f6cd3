import { type LogSink, silentLogger } from '@tributary/observability';
import type { RedisClient } from './connections.js';
import { DIRECT_LIST_TTL_MS, type DirectDoorbell, parseDirectDoorbell } from './doorbells.js';
import { RepeatedErrors } from './repeated-errors.js';
import type { SlotGate } from './slot-gate.js';

const POP_TIMEOUT_SECONDS = 1;
const RETRY_AFTER_ERROR_MS = 1_000;

/** The lists a worker pops: its own (session affinity) and the buckets' ready lists, each optional. */
export interface DoorbellLists {
  own?: string;
  ready: readonly string[];
}

/**
 * Pops doorbells from lists while the worker has a free slot, one at a time: first those handed to
 * this worker (session affinity), then any bucket's ready list (rings nobody prefers, pushed by the
 * enqueue script). Each runs in the next free slot. A direct doorbell that waits too long (or is
 * left when the worker stops) is run elsewhere by its shared fallback, which rings after the affinity
 * wait; a ready one this worker cannot run goes back to its list, and one lost with a worker that
 * died after its pop is re-rung by the sweeper.
 */
export class DirectDoorbells {
  private stopped = false;
  private loop: Promise<void> = Promise.resolve();
  private readonly errors: RepeatedErrors;
  /** Where the next pop starts among the ready lists: BLPOP takes the first non-empty key it is given. */
  private nextReady = 0;

  /** `connection` is used for these pops only and is disconnected by `stop`. */
  constructor(
    private readonly connection: RedisClient,
    private readonly lists: DoorbellLists,
    private readonly gate: SlotGate,
    /** Called with a slot acquired; the callee releases it. */
    private readonly onDoorbell: (doorbell: DirectDoorbell, source: 'direct' | 'ready') => void,
    logger: LogSink = silentLogger,
  ) {
    this.errors = new RepeatedErrors(logger, 'direct doorbells unreachable; retrying');
  }

  start(): void {
    this.loop = this.run();
  }

  /** Within a pop's timeout: a pop in flight is let finish, so what it takes can go back. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.gate.wakeAll();
    await this.loop;
    this.connection.disconnect();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      await this.gate.whenFree();
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
      // Stopping, or a shared doorbell took the slot meanwhile: a ready doorbell goes back to the head
      // of its list for any worker; a direct one waits for this worker's next slot, as if it had
      // stayed in its list (its shared fallback covers a long wait; stopping drops it to that).
      if (source === 'ready' && (this.stopped || !this.gate.tryAcquire())) {
        await this.putBack(list, item);
        continue;
      }
      if (this.stopped) return;
      while (source === 'direct' && !this.gate.tryAcquire()) {
        await this.gate.whenFree();
        if (this.stopped) return;
      }
      this.onDoorbell(parseDirectDoorbell(item), source);
    }
  }

  /** Best effort: a ready doorbell lost here is the sweeper's, like any lost doorbell. */
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
