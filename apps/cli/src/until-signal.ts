import type { Logger } from 'pino';

/** Resolves on the first SIGTERM or SIGINT, so a command can shut down in order and exit 0. */
export function untilSignal(logger: Logger): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      logger.info({ signal }, 'shutting down');
      resolve(signal);
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
}
