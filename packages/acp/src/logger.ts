/** The subset of a pino logger this package writes to (fields first, then the message). */
export interface AcpLogger {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

const ignore = (): void => undefined;

export const silentLogger: AcpLogger = { debug: ignore, info: ignore, warn: ignore, error: ignore };
