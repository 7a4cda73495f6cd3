import type { Redis } from 'ioredis';

/** Where a reply goes: the platform coordinates of the batch's trailing message. */
export interface ReplyTarget {
  platform: string;
  channelId: string;
  threadId?: string;
  /** Event id of the trailing message of the batch. */
  replyToEventId: string;
  /** That message's ArrivalEvent.replyRef: the delivery id a gateway reply names. */
  replyRef?: string;
}

export interface OutboundMessage {
  thread: string;
  batchId: string;
  /** `reply`: the agent's answer; `notice`: something the broker tells the user (timeout, failure). */
  kind: 'reply' | 'notice';
  text: string;
  target: ReplyTarget;
  stopReason?: string;
}

/** A platform-neutral destination; platform adapters implement it. */
export interface ReplySink {
  readonly name: string;
  send(message: OutboundMessage): Promise<void>;
}

export interface OutboxKeys {
  outbox(thread: string, batchId: string, kind: string): string;
}

/**
 * Delivers each (batch, kind) once: a batch re-delivered after a crash finds the mark and posts
 * nothing. The mark is set after the sinks succeeded, so a crash in between may post twice; sinks
 * pass the batch id on as an idempotency key so receivers can absorb that.
 */
export class Outbox {
  constructor(
    private readonly redis: Redis,
    private readonly keys: OutboxKeys,
    private readonly sinks: readonly ReplySink[],
    private readonly retentionMs = 7 * 24 * 60 * 60 * 1000,
  ) {}

  async deliver(message: OutboundMessage): Promise<'sent' | 'already-sent'> {
    const key = this.keys.outbox(message.thread, message.batchId, message.kind);
    if ((await this.redis.exists(key)) === 1) return 'already-sent';
    for (const sink of this.sinks) await sink.send(message);
    await this.redis.set(key, String(Date.now()), 'PX', this.retentionMs);
    return 'sent';
  }
}
