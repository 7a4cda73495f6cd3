import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header our own HMAC-signed routes use (gateway events, Discord forwards, gateway replies). */
export const SIGNATURE_HEADER = 'x-tributary-signature';

/** HMAC-SHA256 of the raw body, hex, as `sha256=<hex>`. */
export function signBody(secret: string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Constant-time check of a `sha256=<hex>` header against the raw body. */
export function verifyBodySignature(secret: string, body: Buffer, header: string | undefined): boolean {
  if (header === undefined) return false;
  const expected = Buffer.from(signBody(secret, body));
  const given = Buffer.from(header);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
