import type { Failure } from './retry-policy.js';

/**
 * A request that got no answer, in words without the URL (a Telegram URL carries the token): a
 * timeout or a failed connection is transient; a URL fetch cannot even parse is a setting to fix.
 */
export function noAnswerFailure(error: unknown, timeoutMs: number): Failure {
  if (error instanceof Error && error.name === 'TimeoutError') {
    return { kind: 'transient', detail: `no answer within ${timeoutMs} ms` };
  }
  const cause =
    error instanceof Error ? (error.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  // fetch wraps the reason in `cause`; undici's request throws it with its `code` directly.
  const code = (error as { code?: unknown } | undefined)?.code;
  if (cause?.code === 'ERR_INVALID_URL' || code === 'ERR_INVALID_URL') {
    return {
      kind: 'failed',
      reason: 'refused',
      detail: 'the request URL is invalid: check the configured API base URL',
    };
  }
  const why = [
    code,
    cause?.code,
    cause?.message,
    error instanceof Error ? error.message : String(error),
  ].find((text) => typeof text === 'string' && text !== '');
  return { kind: 'transient', detail: `could not reach the platform (${why})` };
}
