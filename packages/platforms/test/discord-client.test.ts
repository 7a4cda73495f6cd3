import { type FakePlatformApi, startFakePlatformApi } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyDiscordAnswer } from '../src/discord/answer.js';
import { DiscordClient } from '../src/discord/client.js';
import type { PlatformAnswer } from '../src/http/answer.js';
import { PlatformApiError, type Reaction } from '../src/outbound.js';
import { UNICODE_REACTIONS } from '../src/unicode-reactions.js';
import { answering, expectWaitedAtLeast, FAST_RETRY, threadEvent } from './outbound-fixture.js';

let fake: FakePlatformApi;
let discord: DiscordClient;

beforeAll(async () => {
  fake = await startFakePlatformApi();
  discord = new DiscordClient({ token: fake.tokens.discord, baseUrl: fake.urls.discord, retry: FAST_RETRY });
});
afterAll(() => fake.close());

async function callsOf(run: () => Promise<unknown>) {
  const before = fake.calls().length;
  await run();
  return fake.calls().slice(before);
}

describe('Discord client against the fake REST API', () => {
  it('posts into the thread channel as a reply, returns the id, and edits there', async () => {
    const target = answering('discord', '100', { threadId: '200', messageId: '300' });
    const calls = await callsOf(async () => {
      const id = await discord.send(target, 'answer');
      expect(id).toMatch(/^\d+$/);
      await discord.edit(target, id, 'better answer');
    });
    expect(calls[0]).toMatchObject({
      method: 'createMessage',
      path: '/channels/200/messages',
      body: {
        content: 'answer',
        message_reference: { message_id: '300', fail_if_not_exists: false },
        allowed_mentions: { parse: ['users'], replied_user: true },
      },
    });
    expect(calls[1]).toMatchObject({
      method: 'editMessage',
      status: 200,
      body: { content: 'better answer' },
    });
    expect(calls[1]!.path).toMatch(/^\/channels\/200\/messages\/\d+$/);
  });

  it('reacts and unreacts on the message in its thread, with the URL-encoded emoji', async () => {
    const message = { platform: 'discord', channelId: '100', threadId: '201', messageId: '400' };
    const calls = await callsOf(async () => {
      for (const reaction of Object.keys(UNICODE_REACTIONS) as Reaction[])
        await discord.react(message, reaction);
      await discord.unreact(message, 'working');
    });
    const emoji = calls.map((call) => decodeURIComponent(/\/reactions\/([^/]+)\/@me$/.exec(call.path)![1]!));
    expect(emoji).toEqual([...Object.values(UNICODE_REACTIONS), UNICODE_REACTIONS.working]);
    expect(
      calls.every((call) => call.path.startsWith('/channels/201/messages/400/') && call.status === 204),
    ).toBe(true);
    expect(calls.at(-1)!.method).toBe('removeReaction');
  });

  it('fetches the message a thread was started from, in the parent channel', async () => {
    fake.seedMessage({
      platform: 'discord',
      channelId: '110',
      messageId: '210',
      senderId: '910',
      senderName: 'starter',
      text: 'why is CI red?',
      timestamp: '2025-02-01T08:00:00.123456+00:00',
    });
    const calls = await callsOf(async () => {
      expect(await discord.fetchThreadParent(threadEvent('discord', '110', '210'))).toEqual({
        messageId: '210',
        senderId: '910',
        senderName: 'starter',
        text: 'why is CI red?',
        timestamp: '2025-02-01T08:00:00.123Z',
      });
    });
    expect(calls).toMatchObject([{ method: 'getMessage', path: '/channels/110/messages/210', status: 200 }]);
  });

  it('has no thread parent outside threads, for the starter itself, or for threads without a starter message', async () => {
    fake.seedMessage({
      platform: 'discord',
      channelId: '111',
      messageId: '211',
      senderId: '911',
      text: 'start',
    });
    const calls = await callsOf(async () => {
      expect(await discord.fetchThreadParent(threadEvent('discord', '111', undefined))).toBeUndefined();
      const starter = { ...threadEvent('discord', '111', '211'), eventId: '211' };
      expect(await discord.fetchThreadParent(starter)).toBeUndefined();
      expect(await discord.fetchThreadParent(threadEvent('discord', '111', '999'))).toBeUndefined();
    });
    expect(calls.map((call) => call.status)).toEqual([200, 404]);
  });

  it('honours the precise retry_after of a 429 body', async () => {
    fake.failNext({ platform: 'discord', method: 'createMessage', status: 429, retryAfterSeconds: 0.5 });
    const calls = await callsOf(() => discord.send(answering('discord', '120'), 'after the wait'));
    expectWaitedAtLeast(calls, 500);
    expect(calls).toHaveLength(2);
  });

  it('retries 5xx and succeeds; gives up when they persist', async () => {
    fake.failNext({ platform: 'discord', method: 'createMessage', status: 502, times: 2 });
    const retried = await callsOf(() => discord.send(answering('discord', '121'), 'eventually'));
    expect(retried.map((call) => call.status)).toEqual([502, 502, 200]);

    fake.failNext({ platform: 'discord', method: 'createMessage', status: 503, times: 3 });
    const error = await discord.send(answering('discord', '121'), 'never').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlatformApiError);
    expect((error as Error).message).toMatch(/^discord createMessage failed \(503\): .* on all 3 attempts/);
  });

  it('does not retry a refused request and passes Discord’s code on', async () => {
    const calls = await callsOf(async () => {
      const error = await discord.send(answering('discord', '122'), ' ').catch((e: unknown) => e);
      expect(error).toMatchObject({ status: 400, code: '50006' });
      expect((error as Error).message).toContain(
        'Discord error 50006: Cannot send an empty message; not retried',
      );
    });
    expect(calls).toHaveLength(1);
  });

  it('names DISCORD_BOT_TOKEN when the token is refused, without the token', async () => {
    const wrong = new DiscordClient({
      token: 'wrong-discord-token',
      baseUrl: fake.urls.discord,
      retry: FAST_RETRY,
    });
    const error = await wrong.send(answering('discord', '123'), 'x').catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 401, code: '0' });
    expect((error as Error).message).toContain('check DISCORD_BOT_TOKEN');
    expect((error as Error).message).not.toContain('wrong-discord-token');
  });
});

describe('classifyDiscordAnswer', () => {
  const answer = (status: number, body: unknown, headers: Record<string, string> = {}): PlatformAnswer => ({
    status,
    headers: new Headers(headers),
    body,
  });
  it.each<[string, PlatformAnswer, ReturnType<typeof classifyDiscordAnswer>]>([
    ['204', answer(204, undefined), { kind: 'ok' }],
    [
      '429 body float wins over the header',
      answer(429, { retry_after: 0.123, global: false }, { 'retry-after': '1' }),
      { kind: 'rate-limited', retryAfterMs: 123, detail: 'Discord rate limit (429)' },
    ],
    [
      '429 header only',
      answer(429, undefined, { 'retry-after': '2' }),
      { kind: 'rate-limited', retryAfterMs: 2000, detail: 'Discord rate limit (429)' },
    ],
    [
      'unknown message',
      answer(404, { code: 10008, message: 'Unknown Message' }),
      { kind: 'failed', reason: 'not-found', detail: 'Discord error 10008: Unknown Message', code: '10008' },
    ],
    [
      'missing permissions',
      answer(403, { code: 50013, message: 'Missing Permissions' }),
      { kind: 'failed', reason: 'auth', detail: 'Discord error 50013: Missing Permissions', code: '50013' },
    ],
    ['5xx', answer(500, { message: 'oops' }), { kind: 'transient', detail: 'HTTP 500' }],
  ])('%s', (_, given, expected) => {
    expect(classifyDiscordAnswer(given, 0)).toEqual(expected);
  });
});
