import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FakeAnswer, FakePlatformHandler, FakeRequest } from './handler.js';
import type { FakeFailure } from './types.js';

/**
 * The receiver of `openab.gateway.reply.v1` posts at `/gateway/reply`. With a secret it checks the
 * post as ingress checks a gateway's events: `x-tributary-timestamp` (unix seconds, within 300 s of
 * now) and `x-tributary-signature: v1=<hex HMAC of "v1:<timestamp>:<raw body>">`, computed here
 * independently of the broker's own signing code, so a fault there shows; an unsigned, stale or
 * wrongly signed post gets 401. A body that is not the protocol's reply shape is refused with 400
 * naming the field; unknown fields are accepted, as the protocol may add some.
 */
export function gatewayHandler(secret: string | undefined): FakePlatformHandler {
  return {
    platform: 'gateway',
    // A reply carrying openab's `command` (add_reaction, remove_reaction) is recorded under it.
    method: (request) => {
      if (request.verb !== 'POST' || request.path !== '/reply') return 'unknown';
      const command = request.payload?.command;
      return typeof command === 'string' && command !== '' ? command : 'reply';
    },
    recordedPath: (request) => request.path,
    authorized: (request) => secret === undefined || signatureMatches(secret, request),
    unauthorized: () => ({ status: 401, body: { error: 'invalid signature' } }),
    failure: (failure) => gatewayFailure(failure),
    handle: (request, method) => {
      if (method === 'unknown') return { status: 404, body: { error: 'not found' } };
      const problem = replyProblem(request.payload);
      return problem === undefined
        ? { status: 200, body: { ok: true } }
        : { status: 400, body: { error: problem } };
    },
  };
}

const REPLY_SCHEMA = 'openab.gateway.reply.v1';

/** What makes the body no `openab.gateway.reply.v1`, or undefined when it is one. */
function replyProblem(body: Record<string, unknown> | undefined): string | undefined {
  if (body === undefined) return 'body must be a JSON object';
  if (body.schema !== REPLY_SCHEMA) return `schema must be ${REPLY_SCHEMA}`;
  const channel = objectField(body.channel);
  const content = objectField(body.content);
  const checks: [boolean, string][] = [
    [isFilled(body.reply_to), 'reply_to must be a non-empty string'],
    [isFilled(body.platform), 'platform must be a non-empty string'],
    [channel !== undefined && isFilled(channel.id), 'channel.id must be a non-empty string'],
    [isOptionalString(channel?.thread_id), 'channel.thread_id must be a string or null'],
    [content?.type === 'text', "content.type must be 'text'"],
    [isFilled(content?.text), 'content.text must be a non-empty string'],
    ...['command', 'request_id', 'quote_message_id'].map((key): [boolean, string] => [
      isOptionalString(body[key]),
      `${key} must be a string or null`,
    ]),
  ];
  return checks.find(([ok]) => !ok)?.[1];
}

function objectField(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function isFilled(value: unknown): boolean {
  return typeof value === 'string' && value !== '';
}

function isOptionalString(value: unknown): boolean {
  return value === undefined || value === null || typeof value === 'string';
}

/** How far from now a reply's timestamp may be, either way: the window ingress gives events. */
const WINDOW_SECONDS = 300;

function signatureMatches(secret: string, request: FakeRequest): boolean {
  const timestamp = String(request.headers['x-tributary-timestamp'] ?? '');
  if (!/^\d+$/.test(timestamp) || Math.abs(Date.now() / 1000 - Number(timestamp)) > WINDOW_SECONDS) {
    return false;
  }
  const hmac = createHmac('sha256', secret).update(`v1:${timestamp}:`).update(request.raw);
  const given = Buffer.from(String(request.headers['x-tributary-signature'] ?? ''));
  const expected = Buffer.from(`v1=${hmac.digest('hex')}`);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function gatewayFailure({ status, retryAfterSeconds, error }: FakeFailure): FakeAnswer {
  const headers =
    retryAfterSeconds === undefined ? undefined : { 'retry-after': String(Math.ceil(retryAfterSeconds)) };
  return { status, headers, body: { error: error ?? (status === 429 ? 'rate limited' : 'failure') } };
}
