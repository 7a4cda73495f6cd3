import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { isRedisUnavailable, ReplicationLagError } from '@tributary/queue';
import type { FastifyBaseLogger, FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_CATALOG, type ErrorCode, errorBody, IngressError } from './errors.js';
import type { RequestOutcome } from './ingress-observer.js';

/** Fastify's own request errors, by code, in our catalogue's terms. */
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'body_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_body',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_body',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_body',
  FST_ERR_BAD_URL: 'bad_request',
  FST_ERR_MAX_PARAM_LENGTH: 'uri_too_long',
};

function classify(error: unknown): IngressError {
  if (error instanceof IngressError) return error;
  if (isRedisUnavailable(error)) {
    // The write is on the primary but not yet on the replicas asked for: said as it is, not "nothing was
    // queued"; the retry is recognised as the same message (dedup) and acknowledged once replicated.
    const message =
      error instanceof ReplicationLagError
        ? `${error.message} (a retry of this delivery is recognised as the same message)`
        : 'Redis is unavailable; nothing was queued, retry';
    return new IngressError('redis_unavailable', message, 1);
  }
  const fastifyError = error as Partial<FastifyError>;
  const code = fastifyError.code && FASTIFY_CODES[fastifyError.code];
  if (code) return new IngressError(code, fastifyError.message ?? code);
  if (fastifyError.statusCode === 429) return new IngressError('rate_limited', 'rate limited', 60);
  if (fastifyError.statusCode && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return new IngressError('invalid_body', fastifyError.message ?? 'bad request');
  }
  return new IngressError('internal', 'internal error; nothing was acknowledged, retry');
}

function outcomeOf(error: IngressError): RequestOutcome {
  if (error.code === 'unauthorized' || error.code === 'forbidden') return 'unauthorized';
  if (error.code === 'rate_limited' || error.code === 'backlog_full') return 'refused';
  if (error.status === 503) return 'unavailable';
  if (error.status >= 500) return 'error';
  return 'invalid';
}

/** The one place an error becomes an answer: `{ error, code }`, the catalogue's status, Retry-After. */
export function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply): RequestOutcome {
  const classified = classify(error);
  const refusal = { code: classified.code, reason: classified.message };
  // An outage refuses every request for its duration; it is logged once, where it starts and ends.
  if (classified.code === 'redis_unavailable') request.log.debug(refusal, 'request refused');
  else if (classified.status >= 500) request.log.error({ err: error }, classified.message);
  else request.log.info(refusal, 'request refused');
  if (classified.retryAfterSeconds !== undefined)
    reply.header('retry-after', String(classified.retryAfterSeconds));
  void reply.code(ERROR_CATALOG[classified.code].status).send(errorBody(classified.code, classified.message));
  return outcomeOf(classified);
}

/** Node's own refusals, before there is a request for Fastify: by the Node error code. */
const CLIENT_ERRORS: Record<string, [ErrorCode, string]> = {
  HPE_HEADER_OVERFLOW: ['headers_too_large', 'the request line and headers exceed 16 KiB'],
  ERR_HTTP_REQUEST_TIMEOUT: ['request_timeout', 'the request did not arrive in time'],
};

/**
 * Fastify's `clientErrorHandler`: a request Node could not parse (malformed, headers or URL over the
 * limit, too slow) gets the catalogue's `{ error, code }` too, then the connection is closed.
 */
export function answerClientError(
  error: Error & { code?: string },
  socket: Duplex,
  log: FastifyBaseLogger,
): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [code, message] = CLIENT_ERRORS[error.code ?? ''] ?? ['bad_request', 'malformed HTTP request'];
  log.debug({ code, reason: error.code }, 'request refused');
  if (socket.writable) {
    const { status } = ERROR_CATALOG[code];
    const body = JSON.stringify(errorBody(code, message));
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
