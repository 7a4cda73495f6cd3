/** Where an answer to a message goes (a reply, a reaction, a confirmation). */
export interface MessageRef {
  platform: string;
  channelId: string;
  /** The platform's thread coordinate, when the message is in one. */
  threadId?: string;
  /** The platform's id of the message itself (reactions go on it; replies quote it). */
  messageId: string;
}
