import { type PlatformClient, type PostTarget, platformOfThread, splitMessage } from '@tributary/platforms';
import type { ReplyRecords } from '@tributary/queue';
import type { OutboundMessage, ReplySink, ReplyTarget } from './outbox.js';

/** Where an answer to the batch's trailing message is posted. */
export function postTargetOf(target: ReplyTarget): PostTarget {
  return {
    platform: target.platform,
    channelId: target.channelId,
    ...(target.threadId === undefined ? {} : { threadId: target.threadId }),
    replyToMessageId: target.replyToEventId,
    ...(target.replyRef === undefined ? {} : { replyRef: target.replyRef }),
  };
}

/**
 * Posts replies through the platform that accepted the thread, split at its length limit. Each part's
 * message id is kept, so a re-delivered batch edits what it already posted rather than posting twice.
 */
export class PlatformReplySink implements ReplySink {
  readonly name = 'platform';

  constructor(
    private readonly clients: ReadonlyMap<string, PlatformClient>,
    private readonly posted: ReplyRecords,
  ) {}

  async send(message: OutboundMessage): Promise<void> {
    const client = this.clients.get(platformOfThread(message.thread));
    if (!client) return;
    const postTarget = postTargetOf(message.target);
    const text = message.kind === 'notice' ? `⚠️ ${message.text}` : message.text;
    const parts = splitMessage(
      text === '' ? '(the agent finished without a reply)' : text,
      client.maxMessageLength,
    );
    const already = await this.posted.postedParts(message.thread, message.batchId, message.kind);
    for (const [index, part] of parts.entries()) {
      const messageId = already.get(index);
      if (messageId !== undefined) {
        await client.edit?.(postTarget, messageId, part);
        continue;
      }
      const posted = await client.send(postTarget, part, {
        idempotencyKey: `${message.batchId}:${message.kind}${index === 0 ? '' : `:${index}`}`,
      });
      await this.posted.recordPart(message.thread, message.batchId, message.kind, index, posted);
    }
  }
}
