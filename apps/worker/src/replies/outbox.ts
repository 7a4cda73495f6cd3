import type { MessageRef } from '@tributary/platforms';
import type { Outbound } from '@tributary/queue';

export interface OutboundMessage {
  thread: string;
  batchId: string;
  /** `reply`: the agent's answer; `notice`: something the broker tells the user (timeout, failure). */
  kind: 'reply' | 'notice';
  text: string;
  /** The batch's trailing message: the reply answers it. */
  target: MessageRef;
  stopReason?: string;
}

/** Where a delivered reply goes besides its platform (the log, a test's capture). */
export interface OutboundSink {
  readonly name: string;
  send(message: OutboundMessage, replyId: string): Promise<void>;
}

/** A batch has at most one reply and one notice: together they name an outbound message. */
export function replyId(message: Pick<OutboundMessage, 'batchId' | 'kind'>): string {
  return `${message.batchId}:${message.kind}`;
}

/** How the previous release named the answered message in a stored reply. */
interface PreviousTarget {
  replyToEventId?: string;
}

/**
 * The message as the reply outbox keeps it, written with the batch's commit. Until every worker reads
 * `target.messageId`, the target also carries the name the previous release reads, so a reply committed
 * here and delivered by an older worker during a rolling upgrade still answers its message.
 */
export function toOutbound(message: OutboundMessage): Outbound {
  const target: MessageRef & PreviousTarget = { ...message.target, replyToEventId: message.target.messageId };
  return { id: replyId(message), payload: JSON.stringify({ ...message, target }) };
}

/** A stored reply read back, whichever release wrote it. */
export function outboundFromPayload(payload: string): OutboundMessage {
  const stored = JSON.parse(payload) as OutboundMessage & { target: Partial<MessageRef> & PreviousTarget };
  const { replyToEventId, ...target } = stored.target;
  return { ...stored, target: { ...target, messageId: target.messageId ?? replyToEventId } as MessageRef };
}
