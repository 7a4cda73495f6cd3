import type { PostedPart, ReplyOutbox } from './stores/reply-outbox.js';

/**
 * Which parts of a reply are on the platform already, by the message id the platform gave each: the
 * record in Redis, and in this process the parts whose record Redis did not take yet. A platform's
 * answer is the only proof a post happened; once it came, the part is edited from then on, never
 * posted again, even while Redis is down or restarting (the record is written again by the next
 * attempt). A part recorded in Redis or done with is forgotten here, so this holds only what an outage
 * left unwritten, and the last part of a reply until its done (which records it) returns.
 */
export class PostedParts {
  /** Reply id → part → platform message id, not yet in Redis. */
  private readonly unrecorded = new Map<string, Map<number, string>>();

  constructor(readonly outbox: ReplyOutbox) {}

  /**
   * The parts of reply `replyId` known to be posted: `recorded` (what Redis answered) with those Redis
   * has not taken yet, which are written down now.
   */
  async known(thread: string, replyId: string, recorded: Map<number, string>): Promise<Map<number, string>> {
    const parts = new Map(recorded);
    for (const [part, messageId] of this.unrecorded.get(replyId) ?? []) {
      if (parts.get(part) !== messageId) await this.posted(thread, replyId, part, messageId);
      parts.set(part, messageId);
    }
    return parts;
  }

  /** Part `part` reached the platform as `messageId`: kept here until Redis has it (which may throw). */
  async posted(thread: string, replyId: string, part: number, messageId: string): Promise<void> {
    this.hold(replyId, { part, messageId });
    await this.outbox.recordPart(thread, replyId, part, messageId);
    const parts = this.unrecorded.get(replyId);
    parts?.delete(part);
    if (parts?.size === 0) this.unrecorded.delete(replyId);
  }

  /** Kept here only, until the reply's done records it. */
  hold(replyId: string, { part, messageId }: PostedPart): void {
    const parts = this.unrecorded.get(replyId) ?? new Map<number, string>();
    this.unrecorded.set(replyId, parts);
    parts.set(part, messageId);
  }

  /** The reply is done: nothing of it is posted again. */
  forget(replyId: string): void {
    this.unrecorded.delete(replyId);
  }
}
