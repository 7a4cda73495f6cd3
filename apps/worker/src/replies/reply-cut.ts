import { cutToParts, type PlatformClient, platformOfThread } from '@tributary/platforms';
import type { Logger } from 'pino';
import type { OutboundMessage } from './outbox.js';

/** What ends a cut reply, for everyone in the thread: that it was cut, and how much is missing. */
export function cutNotice(leftOut: number): string {
  return `\n\n✂️ This reply was too long to post whole, so it was cut here: the last ${leftOut.toLocaleString('en-US')} characters were left out. An operator can read all of it in the thread's history.`;
}

/**
 * Bounds a reply to REPLY_MAX_PARTS messages of its thread's platform: an agent that writes megabytes
 * would otherwise post thousands of them. A longer reply is cut where it fills them, its last message
 * saying so; the cut is logged and counted. A thread no platform takes has no messages to count (its
 * replies go to the log).
 */
export class ReplyCut {
  constructor(
    private readonly clients: ReadonlyMap<string, PlatformClient>,
    private readonly maxParts: number,
    private readonly logger: Logger,
    private readonly onCut: (platform: string) => void,
  ) {}

  /** The reply as the thread's platform is sent it; notices and replies that fit, as they are. */
  bound(message: OutboundMessage): OutboundMessage {
    const platform = platformOfThread(message.thread);
    const client = this.clients.get(platform);
    if (client === undefined || message.kind !== 'reply') return message;
    const cut = cutToParts(
      message.text,
      {
        limit: client.maxMessageLength,
        maxParts: this.maxParts,
        render: (markdown) => client.render(markdown),
      },
      cutNotice,
    );
    if (cut === undefined) return message;
    this.onCut(platform);
    this.logger.warn(
      {
        thread: message.thread,
        batchId: message.batchId,
        maxParts: this.maxParts,
        replyChars: message.text.length,
        leftOutChars: cut.leftOut,
      },
      'reply cut at REPLY_MAX_PARTS messages; the batch history keeps all of it',
    );
    return { ...message, text: cut.text };
  }
}
