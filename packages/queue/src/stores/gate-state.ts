import type { RedisClient } from '../connections.js';
import type { KeysOf } from './keys-of.js';

export interface ThreadGateState {
  /** We took part in the thread (a message of it was accepted). */
  involved: boolean;
  /** Agent messages accepted in a row: the loop guard. */
  botTurns: number;
}

/**
 * A thread's gate state, which the enqueue script keeps next to the thread's queue keys as it accepts
 * each message (so acceptance and the loop-guard count never disagree). Read-only here.
 */
export class GateState {
  constructor(
    private readonly redis: RedisClient,
    private readonly keysOf: KeysOf,
  ) {}

  async read(thread: string): Promise<ThreadGateState> {
    const [involved, botTurns] = await this.redis.hmget(this.keysOf(thread).gate, 'involved', 'botTurns');
    return { involved: involved === '1', botTurns: Number(botTurns ?? 0) };
  }
}
