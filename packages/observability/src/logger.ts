import { type DestinationStream, type Logger, pino } from 'pino';

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

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino({ level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, destination);
}
