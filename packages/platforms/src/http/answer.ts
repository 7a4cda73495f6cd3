import { retryAfterHeaderMs } from './retry-after.js';

/** A platform's HTTP answer; `body` is the parsed JSON, the raw text when it is not JSON, or undefined. */
export interface PlatformAnswer {
  status: number;
  headers: Headers;
  body: unknown;
}

/** A fetch response read whole, so every classifier sees the same parsed answer. */
export async function readAnswer(response: Response): Promise<PlatformAnswer> {
  return { status: response.status, headers: response.headers, body: parseBody(await response.text()) };
}

/** The parsed body of an answer: JSON, else its text; undefined when empty. */
export function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Why a call failed for good: each asks the operator for something else. */
export type FailureReason = 'auth' | 'not-found' | 'refused';

/** How a platform's answer is read. `detail` says what the platform said, in words, never a secret. */
export type Verdict =
  | { kind: 'ok' }
  | { kind: 'rate-limited'; retryAfterMs: number | undefined; detail: string }
  | { kind: 'transient'; detail: string }
  | { kind: 'failed'; reason: FailureReason; detail: string; code?: string };

/** Each platform reads its answers its own way (Slack's `ok:false`, Telegram's `retry_after`). */
export type Classifier = (answer: PlatformAnswer, now: number) => Verdict;

/** Plain HTTP semantics; the platform classifiers refine it. */
export function classifyHttpAnswer(answer: PlatformAnswer, now: number): Verdict {
  const { status } = answer;
  if (status >= 200 && status < 300) return { kind: 'ok' };
  if (status === 429) {
    const retryAfterMs = retryAfterHeaderMs(answer.headers.get('retry-after'), now);
    return { kind: 'rate-limited', retryAfterMs, detail: 'rate limited (429)' };
  }
  if (status >= 500 || status === 408) return { kind: 'transient', detail: `HTTP ${status}` };
  const said = bodyText(answer.body);
  return {
    kind: 'failed',
    reason: reasonForStatus(status),
    detail: said ? `HTTP ${status}: ${said}` : `HTTP ${status}`,
  };
}

export function reasonForStatus(status: number): FailureReason {
  if (status === 401 || status === 403) return 'auth';
  if (status === 404) return 'not-found';
  return 'refused';
}

/** A short readable excerpt of an error body: its `error` or `message` field, or its text. */
function bodyText(body: unknown): string | undefined {
  const field = objectField(body, 'error') ?? objectField(body, 'message');
  const text = typeof field === 'string' ? field : typeof body === 'string' ? body : undefined;
  return text?.trim().slice(0, 200) || undefined;
}

/** A field of a JSON object answer, or undefined for anything else. */
export function objectField(body: unknown, name: string): unknown {
  return typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined;
}
