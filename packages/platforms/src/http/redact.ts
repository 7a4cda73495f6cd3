const REDACTED = '[redacted]';

/** Replaces every secret, as written and URL-encoded, so a token in a path never reaches an error or log. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret === '') continue;
    out = out.replaceAll(secret, REDACTED).replaceAll(encodeURIComponent(secret), REDACTED);
  }
  return out;
}
