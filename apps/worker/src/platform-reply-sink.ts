import { type PlatformClient, platformOfThread, splitMessage } from '@tributary/platforms';
import type { OutboundMessage, ReplySink } from './outbox.js';
import type { PostedParts } from './posted-parts.js';

/**
 * Posts replies through the platform that accepted the thread, split at its length limit. Each part's
 * message id is kept (PostedParts: in Redis, and in memory while Redis cannot take it), so a retried
 * reply edits what it already posted rather than posting twice (and a streamed placeholder, part 0,
 * ends as the reply's first part).
 */
export class PlatformReplySink implements ReplySink {
  readonly name = 'platform';

  constructor(
    private readonly clients: ReadonlyMap<string, PlatformClient>,
    private readonly posted: PostedParts,
  ) {}

  delivered(replyId: string): void {
    this.posted.forget(replyId);
  }

  async send(message: OutboundMessage, replyId: string): Promise<void> {
    const client = this.clients.get(platformOfThread(message.thread));
    if (!client) return;
    const { target } = message;
    const text = message.kind === 'notice' ? `⚠️ ${message.text}` : message.text;
    const parts = splitMessage(
      text === '' ? '(the agent finished without a reply)' : text,
      client.maxMessageLength,
    );
    const already = await this.posted.of(message.thread, replyId);
    for (const [index, part] of parts.entries()) {
      const messageId = already.get(index);
      if (messageId !== undefined) {
        await client.edit?.(target, messageId, part);
        continue;
      }
      const posted = await client.send(target, part, {
        idempotencyKey: index === 0 ? replyId : `${replyId}:${index}`,
      });
      await this.posted.posted(message.thread, replyId, index, posted);
    }
  }
}
