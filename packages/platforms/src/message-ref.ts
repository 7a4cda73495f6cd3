import type { ArrivalEvent } from '@tributary/packing';

/**
 * Where an answer to a message goes (a reply, a reaction, a confirmation, a streamed placeholder): the
 * one shape from ingress to the reply sink. Each platform uses what it needs: Slack threads under
 * `threadId ?? messageId`, Telegram and Discord quote `messageId`, a gateway names `replyRef ?? messageId`.
 */
export interface MessageRef {
  /** The message's own platform; a gateway routes its answer to that upstream platform. */
  platform: string;
  channelId: string;
  /** The platform's thread coordinate, when the message is in one. */
  threadId?: string;
  /** The platform's id of the message itself (reactions go on it; replies quote it). */
  messageId: string;
  /** The delivery id a gateway answer must name (ArrivalEvent.replyRef), when it differs from the message id. */
  replyRef?: string;
  /**
   * The workspace the message is in (a Slack team id), when the platform names it: where a deployment
   * serves several, it picks the token that answers (docs/adr/0061).
   */
  workspaceId?: string;
}

/** The answer's address of a queued message, read from the event the worker was handed. */
export function messageRefOf(event: ArrivalEvent): MessageRef {
  return {
    platform: event.platform,
    channelId: event.channelId,
    ...(event.threadId === undefined ? {} : { threadId: event.threadId }),
    messageId: event.eventId,
    ...(event.replyRef === undefined ? {} : { replyRef: event.replyRef }),
    ...(event.workspaceId === undefined ? {} : { workspaceId: event.workspaceId }),
  };
}

/** Who a natively streamed reply is for: Slack shows such a stream to one person in a channel. */
export interface StreamRecipient {
  userId: string;
  /** The recipient's workspace (Slack team id); a stream outside a direct message needs it. */
  workspaceId?: string;
}

/** Whom a natively streamed answer to `event` is for: its sender, in the workspace it wrote from. */
export function streamRecipientOf(event: ArrivalEvent): StreamRecipient {
  return {
    userId: event.sender.id,
    ...(event.workspaceId === undefined ? {} : { workspaceId: event.workspaceId }),
  };
}
