import type { RedisClient } from '../connections.js';
import type { ThreadQueue } from '../thread-queue.js';
import { type ControlMessage, ControlSubscriber, publishControl } from './control-channel.js';

/** A listener for cancels, on a connection of its own; `close` ends it. */
export interface ControlSubscription {
  close(): Promise<void>;
}

/**
 * `/cancel`, `/cancel-all` and `/reset`: the queue's primitives for the waiting messages, plus a cancel
 * published to whichever worker runs the thread's turn right now (delivery is best effort: a cancel
 * that reaches no worker cancels nothing, the right answer when no turn is running).
 */
export class ThreadControls {
  constructor(
    private readonly redis: RedisClient,
    private readonly queue: ThreadQueue,
  ) {}

  /** Cancels the running turn; waiting messages are kept. */
  async cancel(thread: string): Promise<{ wasRunning: boolean }> {
    const { status } = await this.queue.state(thread);
    await this.publishCancel(thread);
    return { wasRunning: status === 'running' };
  }

  /** Cancels the running turn and drops the waiting messages. */
  async cancelAll(thread: string): Promise<{ dropped: number }> {
    const dropped = await this.queue.dropBuffered(thread);
    await this.publishCancel(thread);
    return { dropped };
  }

  /**
   * As cancel-all, and the next message starts a fresh agent session; undefined when Redis knows
   * nothing of the thread (nothing to reset, and nothing is created).
   */
  async reset(thread: string): Promise<{ dropped: number; generation: number } | undefined> {
    const result = await this.queue.reset(thread);
    await this.publishCancel(thread);
    return result;
  }

  /** Tells the worker that ran the thread before that another one has taken it (and its session). */
  async announceMove(thread: string, from: string): Promise<void> {
    await publishControl(this.redis, this.queue.config.prefix, { thread, action: 'moved', from });
  }

  /** Calls `on` with every control message published from now on. */
  async subscribe(on: (message: ControlMessage) => void): Promise<ControlSubscription> {
    const subscriber = new ControlSubscriber(this.redis, this.queue.config.prefix, on);
    await subscriber.start();
    return subscriber;
  }

  private async publishCancel(thread: string): Promise<void> {
    await publishControl(this.redis, this.queue.config.prefix, { thread, action: 'cancel' });
  }
}
