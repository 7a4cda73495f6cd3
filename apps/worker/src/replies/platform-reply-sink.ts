import { type PlatformClient, platformOfThread, splitFormatted } from '@tributary/platforms';
import type { PostedPart, ReplyAttempt } from '@tributary/queue';
import type { OutboundMessage } from './outbox.js';

/**
 * Posts replies through the platform that accepted the thread, split where its rendered text reaches
 * the platform's length limit. A part the
 * attempt finds posted (an earlier attempt, a streamed placeholder as part 0) is edited, never posted
 * again; each part posted is recorded before the next is posted, the last one with the reply's done
 * (the runner records it).
 */
export class PlatformReplySink {
  constructor(private readonly clients: ReadonlyMap<string, PlatformClient>) {}

  /** The last part, when this attempt posted it. */
  async deliver(
    message: OutboundMessage,
    attempt: Pick<ReplyAttempt, 'id' | 'posted' | 'record'>,
  ): Promise<PostedPart | undefined> {
    const client = this.clients.get(platformOfThread(message.thread));
    if (!client) return undefined;
    const { target } = message;
    const text = message.kind === 'notice' ? `⚠️ ${message.text}` : message.text;
    const parts = splitFormatted(
      text === '' ? '(the agent finished without a reply)' : text,
      client.maxMessageLength,
      (markdown) => client.render(markdown),
    );
    for (const [index, part] of parts.entries()) {
      const messageId = attempt.posted.get(index);
      if (messageId !== undefined) {
        await client.edit?.(target, messageId, part);
        continue;
      }
      const posted = await client.send(target, part, {
        idempotencyKey: index === 0 ? attempt.id : `${attempt.id}:${index}`,
      });
      if (index === parts.length - 1) return { part: index, messageId: posted };
      await attempt.record(index, posted);
    }
    return undefined;
  }
}
