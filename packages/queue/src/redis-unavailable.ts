import { ReplyError } from 'ioredis';
import { RedisTopologyError, ReplicationLagError } from './errors.js';

/** Node's codes for a socket that could not connect, or lost its peer. */
const SOCKET_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * The error codes a Redis reply starts with when the server cannot serve the command now: loading its
 * data, a replica without its primary (MASTERDOWN) or written to (READONLY: a demoted primary), a
 * Cluster slot without a primary or mid-migration, and a redirection that reached a client not built for
 * a Cluster (it was pointed at one node of one: readiness says so).
 */
const UNAVAILABLE_REPLIES: ReadonlySet<string> = new Set([
  'LOADING',
  'MASTERDOWN',
  'READONLY',
  'CLUSTERDOWN',
  'TRYAGAIN',
  'MOVED',
  'ASK',
]);

/**
 * ioredis's own classes, which it does not export: a command aborted by a closed connection
 * (AbortError, and its MaxRetriesPerRequestError), and a Cluster that reached none of its nodes.
 */
const IOREDIS_CLASSES: ReadonlySet<string> = new Set([
  'AbortError',
  'MaxRetriesPerRequestError',
  'ClusterAllFailedError',
]);

/**
 * What ioredis raises as a bare `Error`, with neither class nor code: its fixed messages, compared
 * whole. The tests produce the single-node ones from real failures, so an upgrade that rewords one
 * fails them; the Cluster ones are copied from ioredis's source.
 */
const IOREDIS_BARE_MESSAGES: ReadonlySet<string> = new Set([
  'Connection is closed.',
  'Command timed out',
  "Stream isn't writeable and enableOfflineQueue options is false",
  "Cluster isn't ready and enableOfflineQueue options is false",
  'None of startup nodes is available',
]);

/** The one bare message that goes on: the redirection it gave up on follows. */
const REDIRECTIONS_EXHAUSTED = 'Too many Cluster redirections.';

/**
 * Errors that mean "Redis is not answering", as opposed to a bug or a refusal, told by class or code:
 * a socket that failed, a command ioredis gave up on, a reply whose error code says the server cannot
 * serve it now, and the queue's own topology and replication errors.
 */
export function isRedisUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error instanceof RedisTopologyError || error instanceof ReplicationLagError) return true;
  if (error instanceof ReplyError) return UNAVAILABLE_REPLIES.has(replyCode(error));
  const { code } = error as NodeJS.ErrnoException;
  if (code !== undefined) return SOCKET_CODES.has(code);
  if (IOREDIS_CLASSES.has(error.name)) return true;
  return (
    error.constructor === Error &&
    (IOREDIS_BARE_MESSAGES.has(error.message) || error.message.startsWith(REDIRECTIONS_EXHAUSTED))
  );
}

/** A reply error's code: the first word of its message, as the protocol has it. */
function replyCode(error: Error): string {
  const space = error.message.indexOf(' ');
  return space === -1 ? error.message : error.message.slice(0, space);
}
