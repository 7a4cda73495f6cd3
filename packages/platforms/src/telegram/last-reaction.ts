import type { Reaction } from '../outbound.js';

/**
 * The reaction this process last set on each message, bounded (oldest forgotten first). A Telegram bot
 * has one reaction per message and setting one replaces the other, so removing a reaction we know was
 * already replaced must not clear its successor.
 */
export class LastReaction {
  private readonly byMessage = new Map<string, Reaction>();

  constructor(private readonly capacity = 10_000) {}

  set(key: string, reaction: Reaction | undefined): void {
    this.byMessage.delete(key);
    if (reaction === undefined) return;
    this.byMessage.set(key, reaction);
    if (this.byMessage.size > this.capacity) {
      const oldest = this.byMessage.keys().next().value;
      if (oldest !== undefined) this.byMessage.delete(oldest);
    }
  }

  /** True when we know the message now carries another reaction than `reaction`. */
  replacedOtherThan(key: string, reaction: Reaction): boolean {
    const last = this.byMessage.get(key);
    return last !== undefined && last !== reaction;
  }
}
