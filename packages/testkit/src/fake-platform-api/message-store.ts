/** A message as the fake keeps it, whether seeded or posted through the API. */
export interface StoredMessage {
  channelId: string;
  id: string;
  threadId?: string;
  senderId: string;
  senderName: string;
  text: string;
  /** The text as posted with Telegram's `parse_mode: "HTML"`; `text` is what it shows. */
  markup?: string;
  timestamp: string;
  replyTo?: string;
  /** Slack: the message's blocks, which outlive a chat.update that gives none. */
  blocks?: unknown[];
  /** Slack: a message made by chat.startStream, growing until chat.stopStream. */
  streaming?: 'in_progress' | 'completed';
}

/** One platform's messages, by channel and id, and the ids it hands out. */
export class MessageStore {
  private readonly messages = new Map<string, StoredMessage>();
  private counter = 0;

  /** A fresh number, increasing across the store: the base of each platform's id format. */
  nextNumber(): number {
    this.counter += 1;
    return this.counter;
  }

  put(message: StoredMessage): StoredMessage {
    this.messages.set(key(message.channelId, message.id), message);
    return message;
  }

  get(channelId: string, id: string): StoredMessage | undefined {
    return this.messages.get(key(channelId, id));
  }

  /** Messages posted into a thread, oldest first. */
  replies(channelId: string, threadId: string): StoredMessage[] {
    return [...this.messages.values()].filter(
      (message) =>
        message.channelId === channelId && message.threadId === threadId && message.id !== threadId,
    );
  }
}

function key(channelId: string, id: string): string {
  return `${channelId}\u0000${id}`;
}
