/**
 * Every error ingress answers with, by stable code. Bodies are always `{ "error": message, "code": code }`
 * and come from one Fastify error handler; the README's table is kept in step by a test.
 */
export const ERROR_CATALOG = {
  invalid_body: { status: 400, hint: 'fix the request body; it was not queued' },
  bad_request: { status: 400, hint: 'fix the URL or the HTTP framing; nothing was read' },
  unauthorized: { status: 401, hint: 'check the signing secret and the request headers' },
  forbidden: { status: 403, hint: 'this admin token may only read; use one whose role is act' },
  not_found: { status: 404, hint: 'see the README for the routes' },
  platform_not_configured: { status: 404, hint: "set the platform's secret to turn its route on" },
  request_timeout: { status: 408, hint: 'send the whole request within the server timeout' },
  conflict: { status: 409, hint: 'an action with this Idempotency-Key is still running; retry shortly' },
  body_too_large: { status: 413, hint: 'raise BODY_LIMIT_BYTES if such bodies are legitimate' },
  uri_too_long: { status: 414, hint: 'shorten the path; a segment may have at most 100 characters' },
  unsupported_media_type: {
    status: 415,
    hint: 'send what the platform posts: JSON, a form to Slack commands',
  },
  rate_limited: { status: 429, hint: 'retry after the advised delay' },
  backlog_full: { status: 429, hint: 'the thread is over its backlog cap; retry later' },
  headers_too_large: { status: 431, hint: 'send a shorter URL and fewer headers (16 KiB in all)' },
  redis_unavailable: { status: 503, hint: 'Redis did not answer; retry, nothing was acknowledged' },
  internal: { status: 500, hint: 'a bug; the request was not acknowledged, so the platform retries' },
} as const;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export class IngressError extends Error {
  override readonly name = 'IngressError';
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Seconds, for 429 and 503 answers. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.status = ERROR_CATALOG[code].status;
  }
}

export function errorBody(code: ErrorCode, message: string) {
  return { error: message, code };
}
