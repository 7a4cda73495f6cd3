import { loadWorkerConfig } from '@tributary/config';
import { createLogger } from '@tributary/observability';
import { startWorker } from '@tributary/worker';
import { untilSignal } from './until-signal.js';

/** `tributary worker`: runs until SIGTERM/SIGINT, then hands its threads back and exits. */
export async function runWorkerCommand(): Promise<void> {
  const config = loadWorkerConfig(process.env);
  const logger = createLogger(config.logLevel);
  const worker = await startWorker(config, { logger });
  await untilSignal(logger);
  await worker.close();
}
