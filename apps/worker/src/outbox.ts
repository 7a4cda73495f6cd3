import type { Outbound } from '@tributary/queue';

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
  send(message: OutboundMessage, replyId: string): Promise<void>;
  /** The reply left the outbox: whatever the sink kept to resume it is no longer needed. */
  delivered?(replyId: string): void;
}

/** A batch has at most one reply and one notice: together they name an outbound message. */
export function replyId(message: Pick<OutboundMessage, 'batchId' | 'kind'>): string {
  return `${message.batchId}:${message.kind}`;
}

/** The message as the reply outbox keeps it, written with the batch's commit. */
export function toOutbound(message: OutboundMessage): Outbound {
  return { id: replyId(message), payload: JSON.stringify(message) };
}
