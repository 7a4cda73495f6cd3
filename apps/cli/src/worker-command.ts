import { loadWorkerConfig } from '@tributary/config';
import { createLogger, startWorker } from '@tributary/worker';

/** `tributary worker`: runs until SIGTERM/SIGINT, then hands its threads back and exits. */
export async function runWorkerCommand(): Promise<void> {
  const config = loadWorkerConfig(process.env);
  const logger = createLogger(config.logLevel);
  const worker = await startWorker(config, { logger });
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      logger.info({ signal }, 'shutting down');
      resolve();
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  await worker.close();
}
