import type { RedisClient } from '../connections.js';
import { CONTROL_SCRIPTS, controlCancel, controlCancelAll, controlReset } from '../lua/control-calls.js';
import { Scripts } from '../lua/scripts.js';
import { dedupWindowMs, type QueueConfig } from '../queue-config.js';
import { dedupMember } from '../thread-keys.js';
import {
  type ControlMessage,
  ControlSubscriber,
  controlChannelName,
  publishControl,
} from './control-channel.js';
import type { KeysOf } from './keys-of.js';

/** A listener for cancels, on a connection of its own; `close` ends it. */
export interface ControlSubscription {
  close(): Promise<void>;
}

/**
 * `/cancel`, `/cancel-all` and `/reset`: what each does to the waiting messages, plus a cancel published
 * to whichever worker runs the thread's turn right now (delivery is best effort: a cancel that reaches no
 * worker cancels nothing, the right answer when no turn is running).
 *
 * Each takes the `delivery` that asked for it: the idempotency key of the platform message (as for a
 * message, InboundMessage.idempotencyKey) or of the admin action. A delivery is applied once within the
 * thread's dedup window; a retry of it answers 'duplicate' and does nothing (docs/adr/0042). Without
 * one (an admin action sent without an Idempotency-Key) every call applies.
 */
export class ThreadControls {
  private readonly scripts: Scripts;

  constructor(
    private readonly redis: RedisClient,
    private readonly keysOf: KeysOf,
    private readonly config: Readonly<QueueConfig>,
  ) {
    this.scripts = new Scripts(redis, CONTROL_SCRIPTS);
  }

  /** Cancels the running turn; waiting messages are kept. */
  async cancel(thread: string, delivery?: string): Promise<{ wasRunning: boolean } | 'duplicate'> {
    return this.scripts.run(controlCancel, this.keysOf(thread), this.args(thread, delivery));
  }

  /** Cancels the running turn and drops the waiting messages. */
  async cancelAll(thread: string, delivery?: string): Promise<{ dropped: number } | 'duplicate'> {
    return this.scripts.run(controlCancelAll, this.keysOf(thread), this.args(thread, delivery));
  }

  /**
   * As cancel-all, and the next message starts a fresh agent session; undefined when Redis knows
   * nothing of the thread (nothing to reset, and no state is created).
   */
  async reset(
    thread: string,
    delivery?: string,
  ): Promise<{ dropped: number; generation: number } | undefined | 'duplicate'> {
    const reply = await this.scripts.run(controlReset, this.keysOf(thread), this.args(thread, delivery));
    return reply === 'notFound' ? undefined : reply;
  }

  /** Tells the worker that ran the thread before that another one has taken it (and its session). */
  async announceMove(thread: string, from: string): Promise<void> {
    await publishControl(this.redis, this.config.prefix, { thread, action: 'moved', from });
  }

  /** Calls `on` with every control message published from now on. */
  async subscribe(on: (message: ControlMessage) => void): Promise<ControlSubscription> {
    const subscriber = new ControlSubscriber(this.redis, this.config.prefix, on);
    await subscriber.start();
    return subscriber;
  }

  private args(thread: string, delivery: string | undefined) {
    return {
      dedupMember: delivery === undefined ? '' : dedupMember(thread, delivery),
      dedupTtlMs: dedupWindowMs(this.config),
      controlChannel: controlChannelName(this.config.prefix),
      thread,
    };
  }
}
