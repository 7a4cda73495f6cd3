import type { IncomingHttpHeaders } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { request as httpRequest } from 'undici';
import { type Pace, PlatformApiError } from '../outbound.js';
import { type Classifier, type PlatformAnswer, parseBody } from './answer.js';
import { giveUpMessage } from './failure-message.js';
import { noAnswerFailure } from './no-answer.js';
import { redact } from './redact.js';
import { DEFAULT_RETRY_POLICY, type Failure, nextStep, type RetryPolicy } from './retry-policy.js';

/** Called once per HTTP attempt, for counting calls by status; status 0 means no answer. */
export type OnPlatformCall = (platform: string, method: string, status: number) => void;

/** What every platform client accepts besides its credentials. */
export interface PlatformClientOptions {
  /** The API base, e.g. a fake platform server in tests; defaults to the public API. */
  baseUrl?: string;
  retry?: Partial<RetryPolicy>;
  onCall?: OnPlatformCall;
  /** Paces posts and edits across the fleet by the platform's published limits; unpaced without it. */
  pace?: Pace;
}

export interface PlatformRequest {
  /** The API method as errors and metrics name it: `chat.postMessage`, `sendMessage`, `createMessage`. */
  method: string;
  verb?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  headers?: Record<string, string>;
  /**
   * Headers made again for every attempt: a signature over a timestamp must be as fresh on a retry as
   * on the first try, or retries that outlast the receiver's window are refused.
   */
  signedHeaders?: () => Record<string, string>;
  body?: string;
  /** One attempt only (`WriteOptions.draft`): its failure, a rate limit included, is thrown at once. */
  once?: boolean;
}

export interface PlatformHttpOptions {
  platform: string;
  classify: Classifier;
  /** Said when the platform refuses our credentials or permissions: what the operator should check. */
  authHint: string;
  /** Values that must never appear in an error (tokens, also where they sit in a URL). */
  secrets?: readonly string[];
  retry?: Partial<RetryPolicy>;
  onCall?: OnPlatformCall;
}

type Attempt = { answer: PlatformAnswer } | { answer?: undefined; failure: Failure };

/** The one place platform APIs are called: timeout, rate limits, retries, and errors that say what to do. */
export class PlatformHttp {
  private readonly policy: RetryPolicy;

  constructor(private readonly options: PlatformHttpOptions) {
    this.policy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  }

  /** The answer of the first attempt the platform's classifier accepts; otherwise PlatformApiError. */
  async call(request: PlatformRequest): Promise<PlatformAnswer> {
    const { platform, classify, onCall } = this.options;
    let waitedMs = 0;
    const policy = request.once ? { ...this.policy, maxAttempts: 1 } : this.policy;
    for (let attempt = 1; ; attempt++) {
      const result = await this.attempt(request);
      const status = result.answer?.status ?? 0;
      onCall?.(platform, request.method, status);
      const verdict = result.answer ? classify(result.answer, Date.now()) : result.failure;
      if (verdict.kind === 'ok') return result.answer!;
      const step = nextStep(verdict, attempt, waitedMs, policy, Math.random);
      if (step.kind === 'give-up') {
        const message = giveUpMessage({
          failure: verdict,
          step,
          attempts: attempt,
          waitedMs,
          policy,
          authHint: this.options.authHint,
        });
        const code = verdict.kind === 'failed' ? verdict.code : undefined;
        const retryAfterMs = verdict.kind === 'rate-limited' ? verdict.retryAfterMs : undefined;
        throw new PlatformApiError(
          platform,
          request.method,
          status,
          this.redact(message),
          code && this.redact(code),
          retryAfterMs,
        );
      }
      await sleep(step.delayMs);
      waitedMs += step.delayMs;
    }
  }

  private async attempt(request: PlatformRequest): Promise<Attempt> {
    try {
      // undici's request rather than fetch: the same kept-alive connection pool at a fraction of
      // fetch's CPU per call (about a quarter, measured), and a worker makes several calls per turn.
      const response = await httpRequest(request.url, {
        method: request.verb ?? 'POST',
        headers: { ...request.headers, ...request.signedHeaders?.() },
        body: request.body,
        signal: AbortSignal.timeout(this.policy.timeoutMs),
      });
      const body = parseBody(await response.body.text());
      return { answer: { status: response.statusCode, headers: toHeaders(response.headers), body } };
    } catch (error) {
      return { failure: noAnswerFailure(error, this.policy.timeoutMs) };
    }
  }

  private redact(text: string): string {
    return redact(text, this.options.secrets ?? []);
  }
}

function toHeaders(raw: IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  return headers;
}

/** A base URL without its trailing slashes, so paths can be appended with one. */
export function trimBaseUrl(url: string): string {
  return url.replace(/\/+$/, '');
}

/** Options of a client that authenticates with a bot token. */
export interface TokenClientOptions extends PlatformClientOptions {
  /** The bot token; every error message redacts it. */
  token: string;
}

/**
 * The API base and HTTP layer of a bot-token client: the token, and `otherTokens` (a client's tokens
 * for other workspaces), are secrets errors never show.
 */
export function tokenClientHttp(
  options: TokenClientOptions,
  platform: Pick<PlatformHttpOptions, 'platform' | 'classify' | 'authHint'> & { defaultBaseUrl: string },
  otherTokens: Iterable<string> = [],
): { baseUrl: string; http: PlatformHttp } {
  return {
    baseUrl: trimBaseUrl(options.baseUrl ?? platform.defaultBaseUrl),
    http: new PlatformHttp({
      platform: platform.platform,
      classify: platform.classify,
      authHint: platform.authHint,
      secrets: [options.token, ...otherTokens],
      retry: options.retry,
      onCall: options.onCall,
    }),
  };
}
