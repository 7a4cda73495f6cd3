/** The slice of a pino logger the queue uses; pino loggers satisfy it as they are. */
export interface QueueLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const ignore = () => {};
export const silentLogger: QueueLogger = { debug: ignore, info: ignore, warn: ignore, error: ignore };
