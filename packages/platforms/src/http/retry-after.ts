/**
 * A `Retry-After` header as milliseconds from `now`: delay-seconds (fractions accepted) or an HTTP
 * date. Undefined when absent or unreadable, so the caller falls back to backoff.
 */
export function retryAfterHeaderMs(value: string | null, now: number): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  // A number is never read as a date, which Date.parse would accept ("-1" is the year -1).
  if (/^[-+]?[\d.]+$/.test(text)) return secondsToMs(Number(text));
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** A platform's advised wait in seconds (Telegram's and Discord's bodies) as whole milliseconds. */
export function secondsToMs(seconds: unknown): number | undefined {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0) return undefined;
  return Math.ceil(seconds * 1000);
}
