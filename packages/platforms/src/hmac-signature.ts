import { createHmac } from 'node:crypto';

/** The signature header of our own HMAC-signed requests (gateway events, Discord forwards, gateway replies). */
export const SIGNATURE_HEADER = 'x-tributary-signature';

/** Unix seconds at signing, covered by the signature of requests to our HMAC routes. */
export const TIMESTAMP_HEADER = 'x-tributary-timestamp';

/**
 * The signature a request to `/webhooks/gateway` or `/webhooks/discord/forwarded` carries, and a post
 * to GATEWAY_REPLY_URL: `v1=` + hex HMAC-SHA256 of `v1:<timestamp>:<raw body>` (docs/adr/0013).
 */
export function signTimestamped(secret: string, timestamp: string, body: string | Buffer): string {
  const hmac = createHmac('sha256', secret).update(`v1:${timestamp}:`).update(body);
  return `v1=${hmac.digest('hex')}`;
}

/** Both headers of a request to one of our HMAC routes (or of a gateway reply), stamped at `now` (ms). */
export function signedRequestHeaders(
  secret: string,
  body: string | Buffer,
  now = Date.now(),
): Record<string, string> {
  const timestamp = String(Math.floor(now / 1000));
  return { [TIMESTAMP_HEADER]: timestamp, [SIGNATURE_HEADER]: signTimestamped(secret, timestamp, body) };
}
