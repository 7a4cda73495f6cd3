import type { ReplyKind, ReplyRecords } from '@tributary/queue';

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
  kind: ReplyKind;
  text: string;
  target: ReplyTarget;
  stopReason?: string;
}

/** A platform-neutral destination; platform adapters implement it. */
export interface ReplySink {
  readonly name: string;
  send(message: OutboundMessage): Promise<void>;
}

/**
 * Delivers each (batch, kind) once: a batch re-delivered after a crash finds the mark and posts
 * nothing. The mark is set after the sinks succeeded, so a crash in between may post twice; sinks
 * pass the batch id on as an idempotency key so receivers can absorb that.
 */
export class Outbox {
  constructor(
    private readonly records: ReplyRecords,
    private readonly sinks: readonly ReplySink[],
  ) {}

  async deliver(message: OutboundMessage): Promise<'sent' | 'already-sent'> {
    const { thread, batchId, kind } = message;
    if (await this.records.delivered(thread, batchId, kind)) return 'already-sent';
    for (const sink of this.sinks) await sink.send(message);
    await this.records.markDelivered(thread, batchId, kind);
    return 'sent';
  }
}
