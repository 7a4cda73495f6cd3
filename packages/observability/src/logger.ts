import { EventEmitter } from 'node:events';
import { type DestinationStream, type Logger, pino } from 'pino';
import { serializeError, serializeErrors } from './error-serializer.js';

/** Paths that may carry secrets; redaction is configured once, here, for every process. */
export const REDACTED_PATHS = [
  'secret',
  '*.secret',
  'token',
  '*.token',
  'authorization',
  '*.authorization',
  'headers.authorization',
  'headers["x-tributary-signature"]',
  'config.gatewaySecret',
  'env',
  'headers["x-slack-signature"]',
  'headers["x-telegram-bot-api-secret-token"]',
  'headers["x-signature-ed25519"]',
];

/**
 * By default lines go to stdout asynchronously: a write no longer blocks the event loop per line, and
 * lines logged while one write is in flight leave together. pino flushes what is buffered when the
 * process exits, but not the write in flight, which a loaded machine may not have finished by then:
 * commands exit with exitWhenWritten. A SIGKILL or an out-of-memory kill loses what is still buffered.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      // Errors carry more than their message (with ioredis, a Redis password): one way, under any name.
      serializers: { err: serializeError },
      formatters: { log: serializeErrors },
    },
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

/** How long an exit waits for its lines: a stdout nobody reads must not hold it. */
const EXIT_WRITE_BOUND_MS = 2_000;

/**
 * Exits with `code` once every line `logger` took is written, the write in flight included: under
 * load an exit at once can lose that one, and it is often the last word ("worker stopped").
 */
export function exitWhenWritten(logger: Logger, code: number): void {
  process.exitCode = code;
  const stream = (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym];
  if (!(stream instanceof EventEmitter) || !('flushSync' in stream) || !('end' in stream)) {
    // Not pino's own destination (a caller's stream): nothing of ours is in flight.
    process.exit(code);
  }
  const exit = () => process.exit(code);
  setTimeout(exit, EXIT_WRITE_BOUND_MS).unref();
  (stream as EventEmitter).once('close', exit);
  (stream as unknown as { end(): void }).end();
}
