import { createHash, timingSafeEqual } from 'node:crypto';
import { SIGNATURE_HEADER, verifyBodySignature } from './hmac-signature.js';
import type { Verification, WebhookRequest } from './inbound.js';

/** Platforms sign a unix-seconds timestamp; older (or further ahead) requests may be replays. */
export const REPLAY_WINDOW_SECONDS = 300;

export const VERIFIED: Verification = { ok: true };

export function rejected(reason: string): Verification {
  return { ok: false, reason };
}

/** An empty secret would make every signature forgeable: refuse to build such an adapter. */
export function requireSecret(value: string, name: string): void {
  if (value === '') throw new Error(`${name} must not be empty`);
}

/**
 * Constant-time equality of two strings. Both are hashed first so that neither the content nor the
 * length of the expected value leaks through timing.
 */
export function sameSecret(given: string, expected: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

export type FreshTimestamp = { ok: true; timestamp: string } | { ok: false; reason: string };

/** Reads a unix-seconds header and checks it is within the replay window of `request.now`. */
export function freshTimestamp(request: WebhookRequest, header: string): FreshTimestamp {
  const timestamp = request.headers[header];
  if (timestamp === undefined) return { ok: false, reason: `missing ${header} header` };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: `${header} is not unix seconds` };
  if (Math.abs(request.now - Number(timestamp) * 1000) > REPLAY_WINDOW_SECONDS * 1000) {
    return { ok: false, reason: `${header} is more than ${REPLAY_WINDOW_SECONDS} s away from now` };
  }
  return { ok: true, timestamp };
}

/** Our own routes: `x-tributary-signature: sha256=<hex>` over the raw body. */
export function verifyTributarySignature(secret: string, request: WebhookRequest): Verification {
  const header = request.headers[SIGNATURE_HEADER];
  if (header === undefined) return rejected(`missing ${SIGNATURE_HEADER} header`);
  return verifyBodySignature(secret, request.rawBody, header)
    ? VERIFIED
    : rejected(`${SIGNATURE_HEADER} does not match the body`);
}
