import { type Classifier, classifyHttpAnswer, objectField } from '../http/answer.js';
import { retryAfterHeaderMs, secondsToMs } from '../http/retry-after.js';

/**
 * Discord errors are `{ code, message }`; a 429 carries its precise wait as `retry_after` (float
 * seconds) in the body, the header only in whole seconds.
 */
export const classifyDiscordAnswer: Classifier = (answer, now) => {
  if (answer.status === 429) {
    const retryAfterMs =
      secondsToMs(objectField(answer.body, 'retry_after')) ??
      retryAfterHeaderMs(answer.headers.get('retry-after'), now);
    return { kind: 'rate-limited', retryAfterMs, detail: 'Discord rate limit (429)' };
  }
  const verdict = classifyHttpAnswer(answer, now);
  const code = objectField(answer.body, 'code');
  const message = objectField(answer.body, 'message');
  if (verdict.kind !== 'failed' || typeof message !== 'string') return verdict;
  const known = typeof code === 'number' ? String(code) : undefined;
  const detail = known === undefined ? `Discord error: ${message}` : `Discord error ${known}: ${message}`;
  return { ...verdict, detail, code: known };
};
