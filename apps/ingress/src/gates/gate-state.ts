import type { ThreadQueue } from '@tributary/queue';

export interface ThreadGateState {
  involved: boolean;
  botTurns: number;
}

/**
 * Reads a thread's gate state, which the enqueue script keeps next to the thread's queue keys as it
 * accepts each message (so acceptance and the loop-guard count never disagree).
 */
export class GateState {
  constructor(private readonly queue: ThreadQueue) {}

  async read(thread: string): Promise<ThreadGateState> {
    const [involved, botTurns] = await this.queue.redis.hmget(
      this.queue.keys(thread).gate,
      'involved',
      'botTurns',
    );
    return { involved: involved === '1', botTurns: Number(botTurns ?? 0) };
  }
}
