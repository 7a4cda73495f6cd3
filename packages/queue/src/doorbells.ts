import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';

/** What a doorbell job carries: which thread to claim, under which epoch. */
export interface DoorbellData {
  thread: string;
  epoch: number;
}

/** The doorbell transport the queue rings through; the chaos test wraps it to lose some on purpose. */
export interface Doorbell {
  ring(thread: string, member: string, epoch: number, delayMs?: number): Promise<void>;
  /** True while the doorbell job for this epoch is still waiting, delayed or running. */
  pending(member: string, epoch: number): Promise<boolean>;
}

export const DOORBELL_QUEUE = 'doorbell';

/** BullMQ keys of the doorbell queue share one hash tag, so it lives on one Cluster slot. */
export function doorbellPrefix(prefix: string): string {
  return `${prefix}:{dq}`;
}

/** Job ids embed the epoch, which only grows, so an id is never reused and a duplicate add is a no-op. */
export function doorbellJobId(member: string, epoch: number): string {
  return `t-${member}-${epoch}`;
}

const PENDING_STATES = new Set(['waiting', 'delayed', 'active', 'prioritized', 'waiting-children']);

export class BullDoorbell implements Doorbell {
  readonly queue: Queue<DoorbellData>;

  constructor(connection: Redis, prefix: string) {
    this.queue = new Queue<DoorbellData>(DOORBELL_QUEUE, { connection, prefix: doorbellPrefix(prefix) });
  }

  async ring(thread: string, member: string, epoch: number, delayMs = 0): Promise<void> {
    await this.queue.add(
      'ring',
      { thread, epoch },
      {
        jobId: doorbellJobId(member, epoch),
        delay: delayMs,
        removeOnComplete: true,
        removeOnFail: { count: 1_000 },
      },
    );
  }

  async pending(member: string, epoch: number): Promise<boolean> {
    return PENDING_STATES.has(await this.queue.getJobState(doorbellJobId(member, epoch)));
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}
