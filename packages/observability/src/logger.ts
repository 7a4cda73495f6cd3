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
 * process exits; a SIGKILL or an out-of-memory kill loses the lines still buffered in memory.
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
