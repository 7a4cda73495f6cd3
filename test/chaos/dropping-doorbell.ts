import type { Doorbell, DoorbellData, RingOptions } from '@tributary/queue';

/**
 * Loses a share of the rings that go through the doorbell on purpose (the caller's direct hand-over
 * and the shared doorbell), so the sweeper has to find and re-ring those threads. Rings the enqueue
 * script pushes itself are taken off their lists by run.ts instead.
 */
export class DroppingDoorbell implements Doorbell {
  dropped = 0;

  constructor(
    private readonly inner: Doorbell,
    private readonly dropRate: number,
  ) {}

  async ring(thread: string, member: string, epoch: number, options?: RingOptions): Promise<void> {
    if (Math.random() < this.dropRate) {
      this.dropped++;
      return;
    }
    await this.inner.ring(thread, member, epoch, options);
  }

  pending(member: string, epoch: number): Promise<boolean> {
    return this.inner.pending(member, epoch);
  }

  taken(doorbell: DoorbellData, pool: string): Promise<void> {
    return this.inner.taken(doorbell, pool);
  }
}
