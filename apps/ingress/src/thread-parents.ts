import {
  type InboundMessage,
  type PlatformClient,
  platformOfThread,
  type ThreadParent,
} from '@tributary/platforms';
import type { ThreadParentStore } from '@tributary/queue';
import type { Logger } from 'pino';
import { withinDeadline } from './within-deadline.js';

/** Threads remembered as recorded before the set starts over (a bound on memory, not on behaviour). */
const REMEMBERED_THREADS = 10_000;

/**
 * Records a thread's parent message before the thread's first message is queued, so the worker that
 * opens a fresh session finds it. Bounded: a fetch slower than `timeoutMs`, or failing, leaves the
 * thread without a parent and never fails or drops the message. The platform is asked at most once per
 * event, and not at all once the thread's parent (or its absence) is recorded.
 */
export class ThreadParents {
  private readonly recorded = new Set<string>();

  constructor(
    private readonly store: ThreadParentStore<ThreadParent>,
    private readonly clients: ReadonlyMap<string, PlatformClient>,
    private readonly logger: Logger,
    private readonly timeoutMs = 1_000,
  ) {}

  /** Whether `record` would still write or fetch anything for this message's thread. */
  pending(message: InboundMessage): boolean {
    if (this.recorded.has(message.thread)) return false;
    if (message.parent) return true;
    const client = this.clients.get(platformOfThread(message.thread));
    return client?.fetchThreadParent !== undefined && message.event.threadId !== undefined;
  }

  async record(message: InboundMessage): Promise<void> {
    const { thread } = message;
    if (this.recorded.has(thread)) return;
    try {
      if (await this.fetchAndStore(message)) this.remember(thread);
    } catch (error) {
      this.logger.warn({ err: error, thread }, 'thread parent not recorded; the prompt goes without it');
    }
  }

  /** True when the thread's parent is settled in Redis (recorded, known absent, or not fetchable). */
  private async fetchAndStore(message: InboundMessage): Promise<boolean> {
    const { thread, event } = message;
    if (message.parent) {
      await this.store.set(thread, message.parent);
      return true;
    }
    const client = this.clients.get(platformOfThread(thread));
    if (!client?.fetchThreadParent || event.threadId === undefined) return false;
    if (await this.store.has(thread)) return true;
    const parent = await withinDeadline(client.fetchThreadParent(event), this.timeoutMs);
    await this.store.set(thread, parent ?? 'none');
    return true;
  }

  private remember(thread: string): void {
    if (this.recorded.size >= REMEMBERED_THREADS) this.recorded.clear();
    this.recorded.add(thread);
  }
}
