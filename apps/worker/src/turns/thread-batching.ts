import { processingModeOf, readThreadRoute, type WorkerConfig } from '@tributary/config';
import type { ThreadBatching, ThreadRoutes } from '@tributary/queue';
import type { Logger } from 'pino';

/**
 * How a thread's batches are formed (docs/adr/0058): its route's processing mode and batch caps where
 * its profile sets them, else MESSAGE_PROCESSING_MODE(S)' word for its platform and the worker's caps.
 * Read from the thread's route record at each claim and turn end, since a batch is formed before its
 * turn reads the route. A record that cannot be read is said at warn and the platform's word holds.
 */
export function threadBatching(
  config: Pick<WorkerConfig, 'processingMode' | 'processingModes'>,
  /** Where ingress records each thread's route; the store that these settings configure holds it. */
  records: () => Pick<ThreadRoutes, 'of'>,
  logger: Logger,
): (thread: string) => Promise<ThreadBatching> {
  return async (thread) => {
    const platform: ThreadBatching = { mode: processingModeOf(config, thread) };
    const record = await records().of(thread);
    if (record === undefined) return platform;
    let profile: ReturnType<typeof readThreadRoute>['profile'];
    try {
      profile = readThreadRoute(record).profile;
    } catch (error) {
      logger.warn({ err: error, thread }, "thread's route record unreadable; its platform's batching holds");
      return platform;
    }
    return {
      mode: profile.processingMode ?? platform.mode,
      ...(profile.maxBatchMessages === undefined ? {} : { maxMessages: profile.maxBatchMessages }),
      ...(profile.maxBatchTokens === undefined ? {} : { maxTokens: profile.maxBatchTokens }),
    };
  };
}
