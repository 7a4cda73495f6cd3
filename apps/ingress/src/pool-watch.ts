import type { MessageRef, PlatformClient } from '@tributary/platforms';
import { platformOfThread } from '@tributary/platforms';
import { DEFAULT_POOL, type ThreadRoutes, takingWorkersByPool, type WorkerRegistry } from '@tributary/queue';
import type { Logger } from 'pino';

/** How long one reading of the fleet's workers is used: a message costs no Redis read of its own. */
const WORKERS_READ_EVERY_MS = 2_000;
/** A thread is told at most this often that its pool has no worker. */
const NOTICE_EVERY_MS = 60 * 60 * 1000;

export interface PoolWatchOptions {
  workers: Pick<WorkerRegistry, 'list'>;
  routes: Pick<ThreadRoutes, 'claimPoolNotice' | 'releasePoolNotice'>;
  clients: ReadonlyMap<string, PlatformClient>;
  /** Counts a message accepted for a pool without a worker taking turns. */
  onUnserved: (pool: string) => void;
  /** Counts a check (`check`) or a notice (`notice`) that failed. */
  onFailure: (what: 'check' | 'notice') => void;
  logger: Logger;
}

/**
 * A message accepted for a pool that has no worker taking turns is never left to wait in silence
 * (docs/adr/0060): it is kept, its thread is told (at most once an hour), the condition is logged at
 * warn and counted, and TributaryPoolWithoutWorkers fires on the fleet gauges.
 */
export class PoolWatch {
  private reading: { at: number; workers: Promise<Map<string, number>> } | undefined;

  constructor(private readonly options: PoolWatchOptions) {}

  /** After a message of `thread` was accepted for `pool`; never throws, never delays the answer. */
  async accepted(thread: string, pool: string | undefined, ref: MessageRef): Promise<void> {
    const name = pool ?? DEFAULT_POOL;
    const { logger } = this.options;
    try {
      if (((await this.workers()).get(name) ?? 0) > 0) return;
      this.options.onUnserved(name);
      logger.warn(
        { thread, pool: name },
        'message accepted for a worker pool with no worker taking turns; it waits, kept, until one starts (WORKER_POOL)',
      );
    } catch (error) {
      this.options.onFailure('check');
      logger.warn({ err: error, thread, pool: name }, "the pool's workers were not checked for this message");
      return;
    }
    await this.tell(thread, name, ref);
  }

  /** Tells the thread, unless it was told within the hour; a notice that did not go out is tried next time. */
  private async tell(thread: string, pool: string, ref: MessageRef): Promise<void> {
    const { logger, routes } = this.options;
    const client = this.options.clients.get(platformOfThread(thread));
    if (client === undefined) {
      this.options.onFailure('notice');
      logger.warn({ thread, pool }, 'no platform client to tell the thread that its pool has no worker');
      return;
    }
    try {
      if (!(await routes.claimPoolNotice(thread, NOTICE_EVERY_MS))) return;
      await client.send(
        ref,
        `⏳ No worker that serves this channel (pool "${pool}") is running right now. Your message is kept and will be answered as soon as one starts; the operators are alerted if it lasts.`,
      );
    } catch (error) {
      this.options.onFailure('notice');
      logger.warn({ err: error, thread, pool }, 'the thread was not told that its pool has no worker');
      await routes.releasePoolNotice(thread).catch(() => undefined);
    }
  }

  /** Workers taking turns per pool, read again once the last reading is older than a couple of seconds. */
  private workers(): Promise<Map<string, number>> {
    const now = Date.now();
    if (this.reading === undefined || now - this.reading.at > WORKERS_READ_EVERY_MS) {
      const workers = this.options.workers.list().then(takingWorkersByPool);
      // A failed reading is not kept: the next message reads again.
      workers.catch(() => {
        this.reading = undefined;
      });
      this.reading = { at: now, workers };
    }
    return this.reading.workers;
  }
}
