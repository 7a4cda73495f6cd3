/**
 * One platform message as ingress accepted it, before any batching. It is plain JSON because the queue
 * stores it opaquely and a worker of another release may read it back; fields may only be added.
 */
export interface ArrivalEvent {
  /** The platform's identity for the message; ingress dedups on it. */
  eventId: string;
  /** 'slack' | 'telegram' | 'discord' | 'gateway' | ... */
  platform: string;
  /** The parent channel, even when the message is in a thread. */
  channelId: string;
  /** Omitted, never empty, when the message is not in a thread. */
  threadId?: string;
  sender: Sender;
  /** ISO-8601 UTC creation time on the platform, e.g. '2025-01-01T09:30:00.000Z'. */
  timestamp: string;
  /** The prompt exactly as typed; '' for a message that is only attachments. */
  text: string;
  /** In arrival order. */
  attachments: Attachment[];
  /**
   * The delivery id a gateway reply must name (openab's `event_id`, minted afresh per delivery, so it is
   * not the message's identity). Only the reply carries it: it never reaches the agent.
   */
  replyRef?: string;
  /**
   * Set when the event is an edit that travels as an event of its own (its original was dispatched,
   * waits too deep in the queue to rewrite, or is unknown): when it was edited (ISO-8601 UTC).
   * `eventId` and `timestamp` stay those of the original message. An edit of a message still waiting
   * in the queue replaces it instead and carries no mark.
   */
  editedAt?: string;
  /**
   * The workspace the message was written in, where one platform account spans several (Slack's team
   * id). Only the reply uses it: it never reaches the agent.
   */
  workspaceId?: string;
}

export interface Sender {
  id: string;
  name: string;
  displayName: string;
  isBot: boolean;
}

export type Attachment = TextAttachment | ImageAttachment | AudioAttachment | LinkAttachment;

/** Content that is already text: a text file's contents, a voice note's transcript. */
export interface TextAttachment {
  kind: 'text';
  name: string;
  mimeType: string;
  text: string;
}

export interface ImageAttachment {
  kind: 'image';
  mimeType: string;
  /** Base64. */
  data: string;
  uri?: string;
  name?: string;
}

export interface AudioAttachment {
  kind: 'audio';
  mimeType: string;
  /** Base64. */
  data: string;
  uri?: string;
  name?: string;
}

/** A file or page the broker passes by reference only. */
export interface LinkAttachment {
  kind: 'link';
  uri: string;
  name: string;
  mimeType?: string;
  /**
   * Where a worker may download the file with the platform's credentials, at pack time; the agent never
   * sees it. Absent for files only known by reference.
   */
  source?: AttachmentSource;
  /**
   * Why the broker could not fetch the file for this turn; it reaches the agent as the link's
   * description. Set at pack time only, never stored.
   */
  notice?: string;
}

/** A platform file a worker can download: which platform's file host, and the file there. */
export interface AttachmentSource {
  /** The client that fetches it: 'slack' | 'telegram' | 'discord' | 'gateway'. */
  platform: string;
  /** A URL on the platform's file host, or a Telegram file_id. */
  ref: string;
  /** Bytes, when the platform said. */
  size?: number;
}
