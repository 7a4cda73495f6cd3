import { type Classifier, classifyHttpAnswer, type FailureReason, objectField } from '../http/answer.js';
import { retryAfterHeaderMs } from '../http/retry-after.js';

/** Errors saying the state is already as asked (the reaction is there / is gone): success for us. */
const ALREADY_DONE = new Set(['already_reacted', 'no_reaction']);

const AUTH_ERRORS = new Set([
  'not_authed',
  'invalid_auth',
  'account_inactive',
  'token_revoked',
  'token_expired',
  'missing_scope',
  'not_in_channel',
  'restricted_action',
]);

const NOT_FOUND_ERRORS = new Set(['channel_not_found', 'message_not_found', 'thread_not_found']);

/**
 * Slack answers most errors with HTTP 200 and `{ ok: false, error }`: a failure, not retried, except
 * `ratelimited`, which waits for Retry-After like a 429.
 */
export const classifySlackAnswer: Classifier = (answer, now) => {
  const verdict = classifyHttpAnswer(answer, now);
  if (verdict.kind !== 'ok' || objectField(answer.body, 'ok') === true) return verdict;
  const error = objectField(answer.body, 'error');
  if (typeof error !== 'string') {
    return { kind: 'failed', reason: 'refused', detail: 'Slack answered without ok: true or an error' };
  }
  if (ALREADY_DONE.has(error)) return { kind: 'ok' };
  if (error === 'ratelimited') {
    const retryAfterMs = retryAfterHeaderMs(answer.headers.get('retry-after'), now);
    return { kind: 'rate-limited', retryAfterMs, detail: 'Slack error ratelimited' };
  }
  const needed = objectField(answer.body, 'needed');
  const scope = typeof needed === 'string' ? ` (needs scope ${needed})` : '';
  return { kind: 'failed', reason: slackReason(error), detail: `Slack error ${error}${scope}`, code: error };
};

function slackReason(error: string): FailureReason {
  if (AUTH_ERRORS.has(error)) return 'auth';
  return NOT_FOUND_ERRORS.has(error) ? 'not-found' : 'refused';
}
