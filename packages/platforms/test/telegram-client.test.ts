import { type FakePlatformApi, freePort, startFakePlatformApi } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformAnswer } from '../src/http/answer.js';
import { PlatformApiError, type Reaction } from '../src/outbound.js';
import { classifyTelegramAnswer } from '../src/telegram/answer.js';
import { TelegramClient } from '../src/telegram/client.js';
import { TELEGRAM_REACTIONS } from '../src/telegram/reactions.js';
import { answering, expectWaitedAtLeast, FAST_RETRY } from './outbound-fixture.js';

let fake: FakePlatformApi;
let telegram: TelegramClient;

beforeAll(async () => {
  fake = await startFakePlatformApi();
  telegram = new TelegramClient({
    token: fake.tokens.telegram,
    baseUrl: fake.urls.telegram,
    retry: FAST_RETRY,
  });
});
afterAll(() => fake.close());

async function callsOf(run: () => Promise<unknown>) {
  const before = fake.calls().length;
  await run();
  return fake.calls().slice(before);
}

describe('Telegram client against the fake Bot API', () => {
  it('sends into a forum topic quoting the message it answers, and returns the message id', async () => {
    const calls = await callsOf(async () => {
      const id = await telegram.send(
        answering('telegram', '-1001234', { threadId: '7', messageId: '42' }),
        'hello',
      );
      expect(id).toMatch(/^\d+$/);
    });
    expect(calls).toMatchObject([
      {
        method: 'sendMessage',
        path: '/bot<token>/sendMessage',
        status: 200,
        body: {
          chat_id: -1001234,
          text: 'hello',
          message_thread_id: 7,
          reply_parameters: { message_id: 42, allow_sending_without_reply: true },
        },
      },
    ]);
  });

  it('edits a message; an edit to the same text counts as done', async () => {
    const target = answering('telegram', '-1001235');
    const id = await telegram.send(target, 'draft');
    const calls = await callsOf(async () => {
      await telegram.edit(target, id, 'final');
      await telegram.edit(target, id, 'final');
    });
    expect(calls.map((call) => call.status)).toEqual([200, 400]);
  });

  it('posts Markdown as HTML Telegram reads, and as plain text when Telegram refuses an entity', async () => {
    const fallbacks: string[] = [];
    const client = new TelegramClient({
      token: fake.tokens.telegram,
      baseUrl: fake.urls.telegram,
      retry: FAST_RETRY,
      onPlainFallback: (method, reason) => fallbacks.push(`${method}: ${reason}`),
    });
    const target = answering('telegram', '-1001236');
    const formatted = await callsOf(() => client.send(target, '**Done**: `a<b` & [log](https://ci.example)'));
    expect(formatted).toMatchObject([
      {
        status: 200,
        body: {
          parse_mode: 'HTML',
          text: '<b>Done</b>: <code>a&lt;b</code> &amp; <a href="https://ci.example">log</a>',
        },
      },
    ]);
    const refusal = 'Bad Request: can\'t parse entities: Unsupported start tag "b" at byte offset 0';
    fake.failNext({ platform: 'telegram', method: 'sendMessage', status: 400, error: refusal });
    fake.failNext({ platform: 'telegram', method: 'editMessageText', status: 400, error: refusal });
    const plain = await callsOf(async () => {
      const id = await client.send(target, '**Done**: `a<b`');
      await client.edit(target, id, '**Done**: `a<b` and more');
    });
    expect(plain.map((call) => [call.method, call.status, (call.body as { text: string }).text])).toEqual([
      ['sendMessage', 400, '<b>Done</b>: <code>a&lt;b</code>'],
      ['sendMessage', 200, 'Done: a<b'],
      ['editMessageText', 400, '<b>Done</b>: <code>a&lt;b</code> and more'],
      ['editMessageText', 200, 'Done: a<b and more'],
    ]);
    expect(plain.filter((call) => call.status === 200).map((call) => call.body)).not.toContainEqual(
      expect.objectContaining({ parse_mode: expect.anything() }),
    );
    expect(fallbacks).toEqual([`sendMessage: ${refusal}`, `editMessageText: ${refusal}`]);
  });

  it('the fake Bot API refuses HTML that Telegram could not read, as Telegram does', async () => {
    const response = await fetch(`${fake.urls.telegram}/bot${fake.tokens.telegram}/sendMessage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ chat_id: 1, text: 'a <!channel> & <b>b', parse_mode: 'HTML' }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      ok: false,
      description:
        "Bad Request: can't parse entities: Character '<' is reserved and must be escaped at byte offset 2",
    });
  });

  it('reacts only with emoji from Telegram’s allowed set (the fake refuses any other)', async () => {
    const message = { platform: 'telegram', channelId: '-1001236', messageId: '5' };
    const calls = await callsOf(async () => {
      for (const reaction of Object.keys(TELEGRAM_REACTIONS) as Reaction[])
        await telegram.react(message, reaction);
    });
    expect(calls.map((call) => call.status)).toEqual(Object.keys(TELEGRAM_REACTIONS).map(() => 200));
    expect(calls.map((call) => (call.body as { reaction: { emoji: string }[] }).reaction[0]!.emoji)).toEqual(
      Object.values(TELEGRAM_REACTIONS),
    );
  });

  it('removing a reaction that a later one already replaced leaves the later one', async () => {
    const message = { platform: 'telegram', channelId: '-1001237', messageId: '6' };
    const calls = await callsOf(async () => {
      await telegram.react(message, 'accepted');
      await telegram.react(message, 'working');
      await telegram.unreact(message, 'accepted'); // replaced by 'working': nothing to do
      await telegram.unreact(message, 'working');
    });
    expect(calls.map((call) => (call.body as { reaction: unknown[] }).reaction)).toEqual([
      [{ type: 'emoji', emoji: TELEGRAM_REACTIONS.accepted }],
      [{ type: 'emoji', emoji: TELEGRAM_REACTIONS.working }],
      [],
    ]);
  });

  it('honours retry_after of a 429 before retrying', async () => {
    fake.failNext({ platform: 'telegram', method: 'sendMessage', status: 429, retryAfterSeconds: 1 });
    const calls = await callsOf(() => telegram.send(answering('telegram', '-1001238'), 'after the wait'));
    expectWaitedAtLeast(calls, 1000);
    expect(calls).toHaveLength(2);
  });

  it('retries 5xx and succeeds', async () => {
    fake.failNext({ platform: 'telegram', method: 'sendMessage', status: 502, times: 2 });
    const calls = await callsOf(() => telegram.send(answering('telegram', '-1001239'), 'eventually'));
    expect(calls.map((call) => call.status)).toEqual([502, 502, 200]);
  });

  it('gives up on persistent 5xx after maxAttempts', async () => {
    fake.failNext({ platform: 'telegram', method: 'sendMessage', status: 500, times: 3 });
    const error = await telegram.send(answering('telegram', '-1001240'), 'never').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlatformApiError);
    expect((error as Error).message).toMatch(/^telegram sendMessage failed \(500\): .* on all 3 attempts/);
  });

  it('does not retry a Bad Request and says what Telegram said', async () => {
    const calls = await callsOf(async () => {
      const error = await telegram.send(answering('telegram', '-1001241'), '   ').catch((e: unknown) => e);
      expect(error).toMatchObject({ status: 400, code: 'Bad Request: message text is empty' });
    });
    expect(calls).toHaveLength(1);
  });
});

describe('the Telegram token never appears in an error', () => {
  const token = '987654:SECRET-token-value';
  const leaks = (error: unknown) =>
    [String(error), (error as Error).stack, JSON.stringify(error), (error as PlatformApiError).code].some(
      (text) => text?.includes('SECRET-token-value'),
    );

  it.each<[string, () => Promise<string>]>([
    ['refused token', async () => fake.urls.telegram],
    ['nothing listening', async () => `http://127.0.0.1:${await freePort()}`],
    ['unparseable base URL', async () => 'not a url'],
  ])('%s', async (_, baseUrl) => {
    const client = new TelegramClient({
      token,
      baseUrl: await baseUrl(),
      retry: { ...FAST_RETRY, maxAttempts: 2 },
    });
    const error = await client.send(answering('telegram', '1'), 'x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlatformApiError);
    expect(leaks(error)).toBe(false);
  });

  it('names TELEGRAM_BOT_TOKEN when the token is refused', async () => {
    const client = new TelegramClient({ token, baseUrl: fake.urls.telegram, retry: FAST_RETRY });
    const error = await client.send(answering('telegram', '1'), 'x').catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 401 });
    expect((error as Error).message).toContain('Telegram error: Unauthorized; check TELEGRAM_BOT_TOKEN');
  });
});

describe('classifyTelegramAnswer', () => {
  const answer = (status: number, body: unknown, headers: Record<string, string> = {}): PlatformAnswer => ({
    status,
    headers: new Headers(headers),
    body,
  });
  const error = (code: number, description: string, parameters?: object) => ({
    ok: false,
    error_code: code,
    description,
    ...(parameters ? { parameters } : {}),
  });
  it.each<[string, PlatformAnswer, ReturnType<typeof classifyTelegramAnswer>]>([
    ['ok', answer(200, { ok: true, result: true }), { kind: 'ok' }],
    [
      '429 body',
      answer(429, error(429, 'Too Many Requests: retry after 3', { retry_after: 3 })),
      {
        kind: 'rate-limited',
        retryAfterMs: 3000,
        detail: 'Telegram error: Too Many Requests: retry after 3',
      },
    ],
    [
      '429 header only',
      answer(429, undefined, { 'retry-after': '2' }),
      { kind: 'rate-limited', retryAfterMs: 2000, detail: 'Telegram error: Too Many Requests' },
    ],
    ['not modified', answer(400, error(400, 'Bad Request: message is not modified: same')), { kind: 'ok' }],
    [
      'not found',
      answer(400, error(400, 'Bad Request: message to edit not found')),
      {
        kind: 'failed',
        reason: 'not-found',
        detail: 'Telegram error: Bad Request: message to edit not found',
        code: 'Bad Request: message to edit not found',
      },
    ],
    [
      'blocked',
      answer(403, error(403, 'Forbidden: bot was blocked by the user')),
      {
        kind: 'failed',
        reason: 'auth',
        detail: 'Telegram error: Forbidden: bot was blocked by the user',
        code: 'Forbidden: bot was blocked by the user',
      },
    ],
    ['5xx', answer(502, error(502, 'Bad Gateway')), { kind: 'transient', detail: 'HTTP 502' }],
  ])('%s', (_, given, expected) => {
    expect(classifyTelegramAnswer(given, 0)).toEqual(expected);
  });
});
