import { type Classifier, classifyHttpAnswer, objectField } from '../http/answer.js';
import { retryAfterHeaderMs, secondsToMs } from '../http/retry-after.js';

/**
 * Telegram answers `{ ok: false, error_code, description, parameters }`; a 429 carries its wait in
 * `parameters.retry_after` (seconds).
 */
export const classifyTelegramAnswer: Classifier = (answer, now) => {
  const description = objectField(answer.body, 'description');
  const said = typeof description === 'string' ? description : undefined;
  if (answer.status === 429) {
    const retryAfterMs =
      secondsToMs(objectField(objectField(answer.body, 'parameters'), 'retry_after')) ??
      retryAfterHeaderMs(answer.headers.get('retry-after'), now);
    return { kind: 'rate-limited', retryAfterMs, detail: `Telegram error: ${said ?? 'Too Many Requests'}` };
  }
  // An edit to the text the message already has: the message is as asked.
  if (said?.includes('message is not modified')) return { kind: 'ok' };
  const verdict = classifyHttpAnswer(answer, now);
  if (verdict.kind !== 'failed' || said === undefined) return verdict;
  const reason = /not found/i.test(said) ? 'not-found' : verdict.reason;
  return { kind: 'failed', reason, detail: `Telegram error: ${said}`, code: said };
};
