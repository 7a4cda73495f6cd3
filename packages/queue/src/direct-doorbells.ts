import { type LogSink, silentLogger } from '@tributary/observability';
import type { RedisClient } from './connections.js';
import type { DirectDoorbell } from './doorbells.js';
import { RepeatedErrors } from './repeated-errors.js';
import type { SlotGate } from './slot-gate.js';

const POP_TIMEOUT_SECONDS = 1;
const RETRY_AFTER_ERROR_MS = 1_000;

/**
 * Pops the doorbells handed to this worker directly (session affinity) while it has a free slot, one
 * at a time; each runs in the next free slot. Whatever waits too long (or is left when the worker
 * stops) is run elsewhere by its shared fallback, which rings after the affinity wait.
 */
export class DirectDoorbells {
  private stopped = false;
  private loop: Promise<void> = Promise.resolve();
  private readonly errors: RepeatedErrors;

  /** `connection` is used for blocking pops only and is disconnected by `stop`. */
  constructor(
    private readonly connection: RedisClient,
    private readonly list: string,
    private readonly gate: SlotGate,
    /** Called with a slot acquired; the callee releases it. */
    private readonly onDoorbell: (doorbell: DirectDoorbell) => void,
    logger: LogSink = silentLogger,
  ) {
    this.errors = new RepeatedErrors(logger, 'direct doorbells unreachable; retrying');
  }

  start(): void {
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.gate.wakeAll();
    this.connection.disconnect();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      await this.gate.whenFree();
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
      // A shared doorbell may have taken the slot meanwhile: this one waits for the next, as if it
      // had stayed in the list (its shared fallback covers a long wait; stopping drops it to that).
      while (!this.gate.tryAcquire()) {
        await this.gate.whenFree();
        if (this.stopped) return;
      }
      this.onDoorbell(JSON.parse(popped[1]) as DirectDoorbell);
    }
  }
}
