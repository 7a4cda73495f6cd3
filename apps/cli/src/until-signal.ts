import type { Logger } from 'pino';

/** The signals that stop a command in order: kill, Ctrl-C, and a terminal that closes. */
const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/**
 * One Ctrl-C often arrives twice: the terminal signals the whole foreground group, and `npm run`,
 * which is in it, forwards the signal to its child as well. A repeat this soon after the first is that.
 */
export const REPEAT_WITHIN_MS = 1_000;

/**
 * Resolves on the first SIGTERM, SIGINT or SIGHUP, so a command can shut down in order and exit 0.
 * A later one (not the same one delivered twice) means the stop hangs and the user wants out:
 * `force` runs, then the process exits at once.
 */
export function untilSignal(logger: Logger, force: () => void = () => {}): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    let first: number | undefined;
    const stop = (signal: NodeJS.Signals) => {
      const now = Date.now();
      if (first === undefined) {
        first = now;
        logger.info({ signal }, 'shutting down');
        resolve(signal);
        return;
      }
      if (now - first < REPEAT_WITHIN_MS) return;
      logger.warn({ signal }, 'signalled again while stopping: stopping now');
      force();
      process.exit(130);
    };
    for (const signal of STOP_SIGNALS) process.on(signal, stop);
  });
}
