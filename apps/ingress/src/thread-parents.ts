import { type InboundMessage, type PlatformClient, platformOfThread } from '@tributary/platforms';
import type { ThreadParentStore } from '@tributary/queue';
import type { Logger } from 'pino';

/**
 * Records each thread's parent message for a fresh session's first prompt. Runs after acceptance and
 * off the request path: a slow or failing platform call delays nothing and drops nothing, and the
 * fetch runs at most once per accepted event (only while the thread has no parent recorded).
 */
export class ThreadParents {
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly store: ThreadParentStore,
    private readonly clients: ReadonlyMap<string, PlatformClient>,
    private readonly logger: Logger,
    private readonly timeoutMs = 5_000,
  ) {}

  remember(message: InboundMessage): void {
    const task = this.record(message).catch((error: unknown) => {
      this.logger.warn(
        { err: error, thread: message.thread },
        'thread parent not recorded; prompts go without it',
      );
    });
    this.inFlight.add(task);
    void task.finally(() => this.inFlight.delete(task));
  }

  /** Waits for fetches in flight (graceful shutdown, tests). */
  async settle(): Promise<void> {
    await Promise.all(this.inFlight);
  }

  private async record(message: InboundMessage): Promise<void> {
    const { thread, event } = message;
    if (message.parent) return this.store.set(thread, message.parent);
    const client = this.clients.get(platformOfThread(thread));
    if (!client?.fetchThreadParent || event.threadId === undefined) return;
    if (await this.store.has(thread)) return;
    const parent = await Promise.race([
      client.fetchThreadParent(event),
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs).unref(),
      ),
    ]);
    await this.store.set(thread, parent ?? 'none');
  }
}
