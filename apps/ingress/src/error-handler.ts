import { isRedisUnavailable } from '@tributary/queue';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_CATALOG, type ErrorCode, errorBody, IngressError } from './errors.js';
import type { RequestOutcome } from './ingress-observer.js';

/** Fastify's own request errors, by code, in our catalogue's terms. */
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'body_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_body',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_body',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_body',
};

function classify(error: unknown): IngressError {
  if (error instanceof IngressError) return error;
  if (isRedisUnavailable(error)) {
    return new IngressError('redis_unavailable', 'Redis is unavailable; nothing was queued, retry', 1);
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
  if (error.code === 'unauthorized') return 'unauthorized';
  if (error.code === 'rate_limited' || error.code === 'backlog_full') return 'refused';
  if (error.status === 503) return 'unavailable';
  if (error.status >= 500) return 'error';
  return 'invalid';
}

/** The one place an error becomes an answer: `{ error, code }`, the catalogue's status, Retry-After. */
export function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply): RequestOutcome {
  const classified = classify(error);
  if (classified.status >= 500) request.log.error({ err: error }, classified.message);
  else request.log.info({ code: classified.code, reason: classified.message }, 'request refused');
  if (classified.retryAfterSeconds !== undefined)
    reply.header('retry-after', String(classified.retryAfterSeconds));
  void reply.code(ERROR_CATALOG[classified.code].status).send(errorBody(classified.code, classified.message));
  return outcomeOf(classified);
}
