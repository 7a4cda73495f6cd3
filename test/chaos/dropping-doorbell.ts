import type { Doorbell } from '@tributary/queue';

/** Loses a share of doorbells on purpose, so the sweeper has to find and re-ring those threads. */
export class DroppingDoorbell implements Doorbell {
  dropped = 0;

  constructor(
    private readonly inner: Doorbell,
    private readonly dropRate: number,
  ) {}

  async ring(thread: string, member: string, epoch: number, delayMs?: number): Promise<void> {
    if (Math.random() < this.dropRate) {
      this.dropped++;
      return;
    }
    await this.inner.ring(thread, member, epoch, delayMs);
  }

  pending(member: string, epoch: number): Promise<boolean> {
    return this.inner.pending(member, epoch);
  }
}
