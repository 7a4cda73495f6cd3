import { type MessageRef, OrderedByKey, type PlatformClient, platformOfThread } from '@tributary/platforms';
import type { Logger } from 'pino';

/**
 * Puts 👀 on every accepted message, in acceptance order per thread: reactions of one thread are
 * chained, so a slow platform call cannot let a later message's reaction overtake an earlier one.
 * Reactions are best effort; the message is already durable.
 */
export class AcceptedReactions {
  private readonly order = new OrderedByKey();

  constructor(
    private readonly clients: ReadonlyMap<string, PlatformClient>,
    private readonly logger: Logger,
  ) {}

  add(thread: string, ref: MessageRef): void {
    const client = this.clients.get(platformOfThread(thread));
    if (!client?.react) return;
    const react = client.react.bind(client);
    this.order.run(thread, () =>
      react(ref, 'accepted').catch((error: unknown) =>
        this.logger.warn({ err: error, platform: ref.platform, thread }, 'accepted reaction failed'),
      ),
    );
  }

  /** Waits for reactions in flight (graceful shutdown). */
  settle(): Promise<void> {
    return this.order.settle();
  }
}
