import { ConditionLog, type LogSink, silentLogger } from '@tributary/observability';
import type { RedisClient } from '../connections.js';
import { passOn } from '../lua/queue-calls.js';
import { Scripts } from '../lua/scripts.js';
import { DIRECT_LIST_TTL_MS, type DirectDoorbell, parseDirectDoorbell } from './doorbell.js';
import type { SlotGate } from './slot-gate.js';

const POP_TIMEOUT_SECONDS = 1;
const RETRY_AFTER_ERROR_MS = 1_000;
/** The pass-on check runs every half affinity wait, but no more often than this. */
const MIN_PASS_ON_TICK_MS = 50;

export interface DirectDoorbellHandlers {
  /** Called with a slot acquired; the callee releases it. */
  onDoorbell(doorbell: DirectDoorbell): void;
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
 * The doorbells handed to this worker (session affinity: rings of threads whose live session is
 * here), popped one at a time while the worker has a free slot; each runs in the next free slot, and
 * one this worker cannot run goes back to the head of its list. While every slot is busy, the
 * doorbells that waited the affinity wait are passed on to the shared queue if another worker has a
 * slot to spare (else they wait here, where their sessions are), and all of them when the worker
 * stops: only this worker reads its list. What a worker that died or froze leaves in its list (or
 * popped before its claim) is re-rung by the sweeper.
 */
export class DirectDoorbells {
  private stopped = false;
  private loop: Promise<void> = Promise.resolve();
  private readonly errors: ConditionLog;
  private readonly scripts: Scripts;

  /** `connection` is used for this list only and is disconnected by `stop`. */
  constructor(
    private readonly connection: RedisClient,
    private readonly list: string,
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
   * list holds is passed on (ringers no longer hand it doorbells: the worker has retired).
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
        popped = await this.connection.blpop(this.list, POP_TIMEOUT_SECONDS);
      } catch (error) {
        if (this.stopped) return;
        this.errors.report(error);
        await new Promise((resolve) => setTimeout(resolve, RETRY_AFTER_ERROR_MS));
        continue;
      }
      this.errors.cleared();
      if (!popped) continue;
      const [, item] = popped;
      // Stopping, or a shared doorbell took the slot meanwhile: back to the head of the list, where it
      // keeps its place (and its age: it is passed on once it waited too long).
      if (this.stopped || !this.gate.tryAcquire()) {
        await this.putBack(item);
        continue;
      }
      this.handlers.onDoorbell(parseDirectDoorbell(item));
    }
  }

  /**
   * Waits for a free slot; meanwhile, every half affinity wait (a clock that slots freeing and being
   * taken again do not restart), passes on the doorbells that waited the whole wait.
   */
  private async untilFree(): Promise<void> {
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
    try {
      const items = await this.scripts.run(passOn, { doorbells: this.list }, { waitMs });
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
  private async putBack(item: string): Promise<void> {
    try {
      await this.connection.multi().lpush(this.list, item).pexpire(this.list, DIRECT_LIST_TTL_MS).exec();
    } catch (error) {
      this.errors.report(error);
    }
  }
}
