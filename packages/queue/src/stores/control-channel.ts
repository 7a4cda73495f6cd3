import { blockingConnection, type RedisClient } from '../connections.js';

/**
 * Signals between workers: `cancel` to whichever runs a thread's turn right now; `moved` to the
 * worker (`from`) that ran the thread before another one took it, so it closes the session it keeps;
 * `steer` to the worker whose running turn takes steers, that a message arrived (docs/adr/0040).
 */
export type ControlMessage =
  | { thread: string; action: 'cancel' }
  | { thread: string; action: 'moved'; from: string }
  | { thread: string; action: 'steer' };

/** Also published by the enqueue script, for `steer`: a message arrived while a steering turn runs. */
export function controlChannelName(prefix: string): string {
  return `${prefix}:control`;
}

/**
 * Publishes a control message. Delivery is best effort (Redis pub/sub): a cancel that reaches no
 * worker cancels nothing, which is the right answer when no turn is running; a lost `moved` leaves a
 * session to the old worker's periodic check.
 */
export async function publishControl(
  redis: RedisClient,
  prefix: string,
  message: ControlMessage,
): Promise<number> {
  return redis.publish(controlChannelName(prefix), JSON.stringify(message));
}

/** Listens for control messages on a connection of its own (a subscribed connection can do nothing else). */
export class ControlSubscriber {
  private readonly connection: RedisClient;

  constructor(
    redis: RedisClient,
    private readonly prefix: string,
    onMessage: (message: ControlMessage) => void,
  ) {
    // A subscriber connection holds its connection like a blocking one: nothing pipelined behind it.
    this.connection = blockingConnection(redis);
    this.connection.on('message', (_channel: string, raw: string) => {
      const message = parseControl(raw);
      if (message) onMessage(message);
    });
  }

  async start(): Promise<void> {
    await this.connection.subscribe(controlChannelName(this.prefix));
  }

  async close(): Promise<void> {
    this.connection.disconnect();
  }
}

function parseControl(raw: string): ControlMessage | undefined {
  try {
    const value = JSON.parse(raw) as { thread?: unknown; action?: unknown; from?: unknown };
    if (typeof value.thread !== 'string') return undefined;
    if (value.action === 'cancel' || value.action === 'steer')
      return { thread: value.thread, action: value.action };
    if (value.action === 'moved' && typeof value.from === 'string') {
      return { thread: value.thread, action: 'moved', from: value.from };
    }
  } catch {
    // Not ours: ignore anything else published on the channel.
  }
  return undefined;
}
