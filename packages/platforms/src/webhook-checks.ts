import { createHash, timingSafeEqual } from 'node:crypto';
import { SIGNATURE_HEADER, signTimestamped, TIMESTAMP_HEADER } from './hmac-signature.js';
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

/**
 * Constant-time equality of a signature with the one computed for the request. Unlike a secret, the
 * expected value's length is public (its scheme fixes it), so the bytes are compared directly: hashing
 * both first, as sameSecret does, cost two SHA-256 runs on every webhook.
 */
export function sameSignature(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export type FreshTimestamp = { ok: true; timestamp: string } | { ok: false; reason: string };

/** Reads a unix-seconds header and checks it is within the replay window of `request.now`. */
export function freshTimestamp(request: WebhookRequest, header: string): FreshTimestamp {
  const window = `unix seconds within ${REPLAY_WINDOW_SECONDS} s of now`;
  const timestamp = request.headers[header];
  if (timestamp === undefined) return { ok: false, reason: `missing ${header} header (${window})` };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: `${header} is not ${window}` };
  if (Math.abs(request.now - Number(timestamp) * 1000) > REPLAY_WINDOW_SECONDS * 1000) {
    return { ok: false, reason: `${header} is more than ${REPLAY_WINDOW_SECONDS} s away from now` };
  }
  return { ok: true, timestamp };
}

/** Where a timestamped HMAC scheme keeps its parts, and the signature it expects for a timestamp. */
export interface TimestampedScheme {
  timestampHeader: string;
  signatureHeader: string;
  expected(timestamp: string, rawBody: Buffer): string;
}

/**
 * The timestamp first (a stale or missing one ends the check before any HMAC is computed), then a
 * constant-time comparison of the signature over that timestamp and the raw body.
 */
export function verifyTimestamped(scheme: TimestampedScheme, request: WebhookRequest): Verification {
  const fresh = freshTimestamp(request, scheme.timestampHeader);
  if (!fresh.ok) return fresh;
  const signature = request.headers[scheme.signatureHeader];
  if (signature === undefined) return rejected(`missing ${scheme.signatureHeader} header`);
  return sameSignature(signature, scheme.expected(fresh.timestamp, request.rawBody))
    ? VERIFIED
    : rejected(`${scheme.signatureHeader} does not match the timestamp and body`);
}

/**
 * Our own routes: `x-tributary-timestamp: <unix seconds>` and
 * `x-tributary-signature: v1=<hex HMAC-SHA256 of "v1:<timestamp>:<raw body>">`.
 */
export function verifyTributarySignature(secret: string, request: WebhookRequest): Verification {
  const expected = (timestamp: string, rawBody: Buffer) => signTimestamped(secret, timestamp, rawBody);
  return verifyTimestamped(
    { timestampHeader: TIMESTAMP_HEADER, signatureHeader: SIGNATURE_HEADER, expected },
    request,
  );
}
