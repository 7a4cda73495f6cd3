import type { ThreadQueue } from '@tributary/queue';

export interface ThreadGateState {
  involved: boolean;
  botTurns: number;
}

/** Per-thread gate state in Redis, next to the thread's queue keys (same hash slot). */
export class GateState {
  constructor(
    private readonly queue: ThreadQueue,
    /** Idle threads forget their state; a month covers any live conversation. */
    private readonly ttlSeconds = 30 * 24 * 60 * 60,
  ) {}

  async read(thread: string): Promise<ThreadGateState> {
    const [involved, botTurns] = await this.queue.redis.hmget(this.key(thread), 'involved', 'botTurns');
    return { involved: involved === '1', botTurns: Number(botTurns ?? 0) };
  }

  /** After acceptance: we are involved now; a bot message extends the run, a human one ends it. */
  async recordAccepted(thread: string, isBot: boolean): Promise<void> {
    const key = this.key(thread);
    const pipeline = this.queue.redis.multi().hset(key, 'involved', '1');
    if (isBot) pipeline.hincrby(key, 'botTurns', 1);
    else pipeline.hset(key, 'botTurns', '0');
    await pipeline.expire(key, this.ttlSeconds).exec();
  }

  private key(thread: string): string {
    return this.queue.keys(thread).gate;
  }
}
