import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort } from '@tributary/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { classifyHttpAnswer, type PlatformAnswer } from '../src/http/answer.js';
import { giveUpMessage } from '../src/http/failure-message.js';
import { noAnswerFailure } from '../src/http/no-answer.js';
import { PlatformHttp } from '../src/http/platform-http.js';
import { redact } from '../src/http/redact.js';
import { retryAfterHeaderMs } from '../src/http/retry-after.js';
import {
  backoffDelayMs,
  DEFAULT_RETRY_POLICY,
  type Failure,
  nextStep,
  type RetryPolicy,
} from '../src/http/retry-policy.js';
import { PlatformApiError } from '../src/outbound.js';

const policy: RetryPolicy = {
  maxAttempts: 5,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  maxTotalWaitMs: 30_000,
  timeoutMs: 1_000,
};
const fixed = (value: number) => () => value;

describe('backoffDelayMs: exponential steps, half fixed and half jitter, capped', () => {
  it.each([
    [1, 0, 250],
    [1, 0.5, 375],
    [1, 1, 500],
    [2, 0, 500],
    [3, 0, 1_000],
    [4, 1, 4_000],
    [5, 0, 4_000],
    [6, 0, 4_000],
    [12, 1, 8_000],
  ])('retry %i with random %d waits %i ms', (retry, random, expected) => {
    expect(backoffDelayMs(retry, policy, fixed(random))).toBe(expected);
  });
});

describe('nextStep: what a failed attempt leads to', () => {
  const transient: Failure = { kind: 'transient', detail: 'HTTP 503' };
  const limited = (retryAfterMs: number | undefined): Failure => ({
    kind: 'rate-limited',
    retryAfterMs,
    detail: '429',
  });
  const refused: Failure = { kind: 'failed', reason: 'refused', detail: 'HTTP 400' };

  it.each<[string, Failure, number, number, number, ReturnType<typeof nextStep>]>([
    ['a refusal is final', refused, 1, 0, 0, { kind: 'give-up', because: 'not-retryable' }],
    ['a 5xx backs off', transient, 1, 0, 0, { kind: 'retry', delayMs: 250 }],
    ['the backoff grows with the attempt', transient, 3, 750, 1, { kind: 'retry', delayMs: 2_000 }],
    ['the last attempt is final', transient, 5, 1_000, 0, { kind: 'give-up', because: 'attempts' }],
    ['a 429 waits as advised', limited(2_000), 1, 0, 0, { kind: 'retry', delayMs: 2_000 }],
    ['plus a bounded spread', limited(2_000), 1, 0, 1, { kind: 'retry', delayMs: 2_250 }],
    ['a 429 without advice backs off', limited(undefined), 2, 250, 0, { kind: 'retry', delayMs: 500 }],
    [
      'advice beyond the budget is final',
      limited(40_000),
      1,
      0,
      0,
      { kind: 'give-up', because: 'budget', neededMs: 40_000 },
    ],
    [
      'so is backoff beyond it',
      transient,
      2,
      29_700,
      0,
      { kind: 'give-up', because: 'budget', neededMs: 500 },
    ],
  ])('%s', (_, failure, attempt, waitedMs, random, expected) => {
    expect(nextStep(failure, attempt, waitedMs, policy, fixed(random))).toEqual(expected);
  });
});

describe('retryAfterHeaderMs', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  it.each<[string | null, number | undefined]>([
    [null, undefined],
    ['', undefined],
    ['3', 3_000],
    ['1.5', 1_500],
    ['0', 0],
    ['-1', undefined],
    ['soon', undefined],
    ['Wed, 01 Jan 2025 00:00:05 GMT', 5_000],
    ['Tue, 31 Dec 2024 23:59:00 GMT', 0],
  ])('%j → %j ms', (header, expected) => {
    expect(retryAfterHeaderMs(header, now)).toBe(expected);
  });
});

describe('classifyHttpAnswer', () => {
  const answer = (status: number, body?: unknown, headers: Record<string, string> = {}): PlatformAnswer => ({
    status,
    headers: new Headers(headers),
    body,
  });
  it.each<[string, PlatformAnswer, ReturnType<typeof classifyHttpAnswer>]>([
    ['2xx', answer(204), { kind: 'ok' }],
    [
      '429 with Retry-After',
      answer(429, undefined, { 'retry-after': '2' }),
      { kind: 'rate-limited', retryAfterMs: 2_000, detail: 'rate limited (429)' },
    ],
    ['5xx', answer(502), { kind: 'transient', detail: 'HTTP 502' }],
    ['408', answer(408), { kind: 'transient', detail: 'HTTP 408' }],
    [
      '401',
      answer(401, { error: 'bad token' }),
      { kind: 'failed', reason: 'auth', detail: 'HTTP 401: bad token' },
    ],
    ['404', answer(404, 'gone'), { kind: 'failed', reason: 'not-found', detail: 'HTTP 404: gone' }],
    [
      '400',
      answer(400, { message: 'nope' }),
      { kind: 'failed', reason: 'refused', detail: 'HTTP 400: nope' },
    ],
  ])('%s', (_, given, expected) => {
    expect(classifyHttpAnswer(given, 0)).toEqual(expected);
  });
});

describe('giveUpMessage says what happened and what to do next', () => {
  const base = { attempts: 3, waitedMs: 1_500, policy, authHint: 'check SLACK_BOT_TOKEN' };
  it.each<[string, Parameters<typeof giveUpMessage>[0], RegExp]>([
    [
      'auth',
      {
        ...base,
        failure: { kind: 'failed', reason: 'auth', detail: 'Slack error invalid_auth' },
        step: { kind: 'give-up', because: 'not-retryable' },
      },
      /^Slack error invalid_auth; check SLACK_BOT_TOKEN$/,
    ],
    [
      'not found',
      {
        ...base,
        failure: { kind: 'failed', reason: 'not-found', detail: 'HTTP 404' },
        step: { kind: 'give-up', because: 'not-retryable' },
      },
      /^HTTP 404; check the channel and message ids/,
    ],
    [
      'refused',
      {
        ...base,
        failure: { kind: 'failed', reason: 'refused', detail: 'HTTP 400' },
        step: { kind: 'give-up', because: 'not-retryable' },
      },
      /^HTTP 400; not retried, since the same request would be refused again$/,
    ],
    [
      'out of attempts',
      {
        ...base,
        failure: { kind: 'transient', detail: 'HTTP 503' },
        step: { kind: 'give-up', because: 'attempts' },
      },
      /^HTTP 503 on all 3 attempts over 1\.5 s; the platform is unavailable, check its status and retry later$/,
    ],
    [
      'still rate limited',
      {
        ...base,
        failure: { kind: 'rate-limited', retryAfterMs: 100, detail: 'rate limited (429)' },
        step: { kind: 'give-up', because: 'attempts' },
      },
      /^rate limited \(429\), still after 3 attempts over 1\.5 s; send less often or retry later$/,
    ],
    [
      'beyond the budget',
      {
        ...base,
        failure: { kind: 'rate-limited', retryAfterMs: 60_000, detail: 'rate limited (429)' },
        step: { kind: 'give-up', because: 'budget', neededMs: 60_000 },
      },
      /wait 60\.0 s, beyond the retry budget of 30\.0 s \(1\.5 s spent\); retry later or raise the budget$/,
    ],
  ])('%s', (_, input, expected) => {
    expect(giveUpMessage(input)).toMatch(expected);
  });
});

describe('redact and noAnswerFailure', () => {
  it('removes secrets as written and URL-encoded', () => {
    expect(redact('a 12:ab/c b 12%3Aab%2Fc', ['12:ab/c', ''])).toBe('a [redacted] b [redacted]');
  });

  const fetchFailed = (cause: object) => Object.assign(new TypeError('fetch failed'), { cause });
  it.each<[string, unknown, Failure]>([
    [
      'timeout',
      new DOMException('The operation was aborted due to timeout', 'TimeoutError'),
      { kind: 'transient', detail: 'no answer within 250 ms' },
    ],
    [
      'refused connection',
      fetchFailed({ code: 'ECONNREFUSED' }),
      { kind: 'transient', detail: 'could not reach the platform (ECONNREFUSED)' },
    ],
    [
      'blocked port',
      fetchFailed(new Error('bad port')),
      { kind: 'transient', detail: 'could not reach the platform (bad port)' },
    ],
    [
      'unparseable URL',
      fetchFailed({ code: 'ERR_INVALID_URL', input: 'x/bot1:secret' }),
      {
        kind: 'failed',
        reason: 'refused',
        detail: 'the request URL is invalid: check the configured API base URL',
      },
    ],
    [
      'refused connection, as undici reports it',
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
      { kind: 'transient', detail: 'could not reach the platform (ECONNREFUSED)' },
    ],
    [
      'unparseable URL, as undici reports it',
      Object.assign(new TypeError('Invalid URL'), { code: 'ERR_INVALID_URL' }),
      {
        kind: 'failed',
        reason: 'refused',
        detail: 'the request URL is invalid: check the configured API base URL',
      },
    ],
    [
      'anything else',
      new Error('boom'),
      { kind: 'transient', detail: 'could not reach the platform (boom)' },
    ],
  ])('%s', (_, error, expected) => {
    expect(noAnswerFailure(error, 250)).toEqual(expected);
  });
});

describe('PlatformHttp over real sockets', () => {
  let server: Server | undefined;
  afterEach(() => {
    server?.closeAllConnections();
    server?.close();
  });

  const http = (calls: number[], retry: Partial<RetryPolicy>) =>
    new PlatformHttp({
      platform: 'test',
      classify: classifyHttpAnswer,
      authHint: 'check TEST_TOKEN',
      secrets: ['s3cret'],
      retry: { ...retry, baseDelayMs: 5 },
      onCall: (_platform, _method, status) => calls.push(status),
    });

  it('counts an attempt that got no answer in time as status 0 and gives up after maxAttempts', async () => {
    server = createServer(() => {}); // never answers
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/s3cret/x`;
    const calls: number[] = [];
    const error = await http(calls, { timeoutMs: 100, maxAttempts: 2 })
      .call({ method: 'probe', url })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlatformApiError);
    expect((error as PlatformApiError).status).toBe(0);
    expect((error as Error).message).toMatch(
      /^test probe failed \(no answer\): no answer within 100 ms on all 2 attempts/,
    );
    expect(calls).toEqual([0, 0]);
  });

  it('reports a refused connection by its code, without the URL', async () => {
    const url = `http://127.0.0.1:${await freePort()}/s3cret`;
    const error = await http([], { maxAttempts: 2 })
      .call({ method: 'probe', url })
      .catch((e: unknown) => e);
    expect((error as Error).message).toContain('could not reach the platform (ECONNREFUSED)');
    expect((error as Error).message).not.toContain('s3cret');
  });

  it('uses the default policy where none is given', () => {
    expect(DEFAULT_RETRY_POLICY.maxAttempts).toBeGreaterThan(1);
    expect(DEFAULT_RETRY_POLICY.maxTotalWaitMs).toBeGreaterThan(DEFAULT_RETRY_POLICY.maxDelayMs);
  });
});
