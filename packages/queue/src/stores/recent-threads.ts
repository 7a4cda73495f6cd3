import type { RedisClient } from '../connections.js';

/**
 * Each person's latest thread per channel, for commands that come without one (Slack lets no app's
 * slash command be used in a thread). One hash per channel, person → thread; it outlives the channel's
 * last message by the threads' idle time, as the threads it names do.
 */
export class RecentThreads {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly ttlMs: number,
  ) {}

  async note(channel: string, person: string, thread: string): Promise<void> {
    const key = this.key(channel);
    await this.redis.multi().hset(key, person, thread).pexpire(key, this.ttlMs).exec();
  }

  async latest(channel: string, person: string): Promise<string | undefined> {
    return (await this.redis.hget(this.key(channel), person)) ?? undefined;
  }

  /** `channel` is `<platform>:<channel id>`. */
  private key(channel: string): string {
    return `${this.prefix}:recent:{${channel}}`;
  }
}
