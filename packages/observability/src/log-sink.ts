/**
 * What a library package writes its logs to: the slice of a pino logger it uses (fields first, then the
 * message), so pino loggers satisfy it as they are and the packages need not depend on pino.
 */
export interface LogSink {
  debug(fields: object, message?: string): void;
  info(fields: object, message?: string): void;
  warn(fields: object, message?: string): void;
  error(fields: object, message?: string): void;
}

const ignore = (): void => undefined;

/** The default when the caller passes no logger. */
export const silentLogger: LogSink = { debug: ignore, info: ignore, warn: ignore, error: ignore };
