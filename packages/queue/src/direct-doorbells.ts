import { type LogSink, silentLogger } from '@tributary/observability';
import type { Redis } from 'ioredis';
import type { DirectDoorbell } from './doorbells.js';
import type { SlotGate } from './slot-gate.js';

const POP_TIMEOUT_SECONDS = 1;
const RETRY_AFTER_ERROR_MS = 1_000;

/**
 * Pops the doorbells handed to this worker directly (session affinity) while it has a free slot. A
 * doorbell it cannot run right away is dropped: its shared fallback rings after the affinity wait.
 */
export class DirectDoorbells {
  private stopped = false;
  private loop: Promise<void> = Promise.resolve();

  /** `connection` is used for blocking pops only and is disconnected by `stop`. */
  constructor(
    private readonly connection: Redis,
    private readonly list: string,
    private readonly gate: SlotGate,
    /** Called with a slot acquired; the callee releases it. */
    private readonly onDoorbell: (doorbell: DirectDoorbell) => void,
    private readonly logger: LogSink = silentLogger,
  ) {}

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
        this.logger.warn({ err: error }, 'direct doorbells unreachable; retrying');
        await new Promise((resolve) => setTimeout(resolve, RETRY_AFTER_ERROR_MS));
        continue;
      }
      if (!popped || this.stopped || !this.gate.tryAcquire()) continue;
      this.onDoorbell(JSON.parse(popped[1]) as DirectDoorbell);
    }
  }
}
