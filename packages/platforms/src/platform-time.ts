import { InvalidWebhookError } from './inbound.js';

// Beyond year 9999 toISOString switches to a six-digit year, which is not the ArrivalEvent format.
const END_OF_YEAR_9999 = Date.UTC(10000, 0, 1);
const RFC3339 = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;

/** Milliseconds since the epoch → `2025-01-01T09:30:00.000Z`. */
export function isoFromEpochMs(ms: number, field: string): string {
  if (!Number.isFinite(ms) || ms < 0 || ms >= END_OF_YEAR_9999) {
    throw new InvalidWebhookError(`${field} is not a time between 1970 and 9999`);
  }
  return new Date(Math.floor(ms)).toISOString();
}

export function isoFromUnixSeconds(seconds: number, field: string): string {
  return isoFromEpochMs(seconds * 1000, field);
}

/** Milliseconds of a decimal fraction of a second ('000200' → 0, '5' → 500); finer digits are dropped. */
function fractionToMs(digits: string | undefined): number {
  return Number((digits ?? '').padEnd(3, '0').slice(0, 3));
}

/** A Slack `ts` ("1700000000.123456": seconds and a fraction) → UTC with milliseconds. */
export function isoFromSlackTs(ts: string, field: string): string {
  const [seconds = '', fraction] = ts.split('.');
  return isoFromEpochMs(Number(seconds) * 1000 + fractionToMs(fraction), field);
}

/** An RFC 3339 time with any offset (Discord's `+00:00`, microseconds) → UTC with milliseconds. */
export function isoFromRfc3339(text: string, field: string): string {
  const match = RFC3339.exec(text);
  const ms = match === null ? Number.NaN : Date.parse(`${match[1]}${match[3]}`) + fractionToMs(match[2]);
  if (Number.isNaN(ms)) {
    throw new InvalidWebhookError(`${field} must be an RFC 3339 time like 2025-01-01T09:30:00.000+00:00`);
  }
  return isoFromEpochMs(ms, field);
}
