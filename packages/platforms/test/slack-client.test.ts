import { type FakePlatformApi, startFakePlatformApi } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformAnswer } from '../src/http/answer.js';
import { PlatformApiError, type Reaction } from '../src/outbound.js';
import { classifySlackAnswer } from '../src/slack/answer.js';
import { SlackClient } from '../src/slack/client.js';
import { SLACK_REACTIONS } from '../src/slack/reactions.js';
import { answering, expectWaitedAtLeast, FAST_RETRY, threadEvent } from './outbound-fixture.js';

let fake: FakePlatformApi;
let slack: SlackClient;
const statuses: number[] = [];

beforeAll(async () => {
  fake = await startFakePlatformApi();
  slack = new SlackClient({
    token: fake.tokens.slack,
    baseUrl: fake.urls.slack,
    retry: FAST_RETRY,
    onCall: (_platform, _method, status) => statuses.push(status),
  });
});
afterAll(() => fake.close());

/** The calls made by `run`, in order. */
async function callsOf(run: () => Promise<unknown>) {
  const before = fake.calls().length;
  await run();
  return fake.calls().slice(before);
}

describe('Slack client against the fake Web API', () => {
  it('posts into a thread and returns the ts; edits it', async () => {
    const target = answering('slack', 'C-send', {
      threadId: '1700000000.000100',
      messageId: '1700000000.000200',
    });
    const ts = await slack.send(target, 'first');
    expect(ts).toMatch(/^\d+\.\d{6}$/);
    await slack.edit(target, ts, 'second');
    const [post, update] = fake
      .calls()
      .filter((call) => (call.body as { channel?: string }).channel === 'C-send');
    expect(post).toMatchObject({
      method: 'chat.postMessage',
      body: { channel: 'C-send', thread_ts: target.threadId, text: 'first' },
    });
    expect(update).toMatchObject({ method: 'chat.update', status: 200, body: { ts, text: 'second' } });
  });

  it('posts Markdown as mrkdwn in which the agent’s mentions are text, unless mentions are allowed', async () => {
    const markdown = '**Heads up** <!channel>: see [the log](https://ci.example/run?id=1&x=2)';
    const allowing = new SlackClient({
      token: fake.tokens.slack,
      baseUrl: fake.urls.slack,
      retry: FAST_RETRY,
      mentions: 'allow',
    });
    const calls = await callsOf(async () => {
      const ts = await slack.send(answering('slack', 'C-format'), markdown);
      await slack.edit(answering('slack', 'C-format'), ts, `${markdown} (edited)`);
      await allowing.send(answering('slack', 'C-format'), markdown);
    });
    expect(calls.map((call) => [call.status, (call.body as { text: string }).text])).toEqual([
      [200, '*Heads up* &lt;!channel&gt;: see <https://ci.example/run?id=1&amp;x=2|the log>'],
      [200, '*Heads up* &lt;!channel&gt;: see <https://ci.example/run?id=1&amp;x=2|the log> (edited)'],
      [200, '*Heads up* <!channel>: see <https://ci.example/run?id=1&amp;x=2|the log>'],
    ]);
  });

  it('reacts with the short name of each reaction; repeats and removals of absent ones succeed', async () => {
    const message = { platform: 'slack', channelId: 'C-react', messageId: '1700000001.000200' };
    const calls = await callsOf(async () => {
      for (const reaction of Object.keys(SLACK_REACTIONS) as Reaction[]) await slack.react(message, reaction);
      await slack.react(message, 'accepted'); // already_reacted
      await slack.unreact(message, 'accepted');
      await slack.unreact(message, 'accepted'); // no_reaction
    });
    expect(calls.map((call) => (call.body as { name: string }).name)).toEqual([
      'eyes',
      'gear',
      'hammer_and_wrench',
      'yawning_face',
      'sleeping',
      'white_check_mark',
      'warning',
      'eyes',
      'eyes',
      'eyes',
    ]);
    expect(calls.map((call) => call.method).slice(-3)).toEqual([
      'reactions.add',
      'reactions.remove',
      'reactions.remove',
    ]);
  });

  it('fetches the thread parent with conversations.replies', async () => {
    fake.seedMessage({
      platform: 'slack',
      channelId: 'C-thread',
      messageId: '1700000100.000300',
      senderId: 'U-root',
      text: 'the root',
    });
    const calls = await callsOf(async () => {
      expect(await slack.fetchThreadParent(threadEvent('slack', 'C-thread', '1700000100.000300'))).toEqual({
        messageId: '1700000100.000300',
        senderId: 'U-root',
        senderName: 'U-root',
        text: 'the root',
        timestamp: '2023-11-14T22:15:00.000Z',
      });
    });
    expect(calls).toMatchObject([
      { method: 'conversations.replies', body: { channel: 'C-thread', ts: '1700000100.000300', limit: '1' } },
    ]);
  });

  it('has no thread parent for a top-level event, for the root itself, or for a thread Slack does not know', async () => {
    fake.seedMessage({
      platform: 'slack',
      channelId: 'C-root',
      messageId: '1700000200.000400',
      senderId: 'U-asker',
      text: 'root',
    });
    const root = { ...threadEvent('slack', 'C-root', '1700000200.000400'), eventId: '1700000200.000400' };
    const calls = await callsOf(async () => {
      expect(await slack.fetchThreadParent(threadEvent('slack', 'C-root', undefined))).toBeUndefined();
      expect(await slack.fetchThreadParent(root)).toBeUndefined();
      expect(await slack.fetchThreadParent(threadEvent('slack', 'C-root', '1.000001'))).toBeUndefined();
    });
    expect(calls.map((call) => call.method)).toEqual(['conversations.replies', 'conversations.replies']);
  });

  it('honours a 429 Retry-After before retrying', async () => {
    fake.failNext({ platform: 'slack', method: 'chat.postMessage', status: 429, retryAfterSeconds: 1 });
    const calls = await callsOf(() => slack.send(answering('slack', 'C-429'), 'after the wait'));
    expectWaitedAtLeast(calls, 1000);
    expect(calls.map((call) => call.status)).toEqual([429, 200]);
  });

  it('honours an ok:false ratelimited answer like a 429', async () => {
    fake.failNext({
      platform: 'slack',
      method: 'chat.postMessage',
      status: 200,
      error: 'ratelimited',
      retryAfterSeconds: 1,
    });
    const calls = await callsOf(() => slack.send(answering('slack', 'C-ratelimited'), 'after the wait'));
    expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(1000);
    expect(calls).toHaveLength(2);
  });

  it('retries 5xx and succeeds', async () => {
    fake.failNext({ platform: 'slack', method: 'chat.postMessage', status: 503, times: 2 });
    const calls = await callsOf(() => slack.send(answering('slack', 'C-5xx'), 'eventually'));
    expect(calls.map((call) => call.status)).toEqual([503, 503, 200]);
  });

  it('gives up on persistent 5xx after maxAttempts with a PlatformApiError, counting each call', async () => {
    fake.failNext({ platform: 'slack', method: 'chat.postMessage', status: 500, times: 3 });
    statuses.length = 0;
    const error = await slack.send(answering('slack', 'C-down'), 'never').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlatformApiError);
    expect(error).toMatchObject({ platform: 'slack', method: 'chat.postMessage', status: 500 });
    expect((error as Error).message).toMatch(
      /HTTP 500 on all 3 attempts .* check its status and retry later$/,
    );
    expect(statuses).toEqual([500, 500, 500]);
  });

  it('does not retry ok:false errors and names the Slack error', async () => {
    const calls = await callsOf(async () => {
      const error = await slack.edit(answering('slack', 'C-none'), '1.000009', 'x').catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'message_not_found', status: 200 });
      expect((error as Error).message).toContain(
        'Slack error message_not_found; check the channel and message ids',
      );
    });
    expect(calls).toHaveLength(1);
  });

  it('names SLACK_BOT_TOKEN when the token is refused, without the token', async () => {
    const wrong = new SlackClient({ token: 'xoxb-wrong-token', baseUrl: fake.urls.slack, retry: FAST_RETRY });
    const error = await wrong.send(answering('slack', 'C-auth'), 'x').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'invalid_auth' });
    expect((error as Error).message).toContain('check SLACK_BOT_TOKEN');
    expect((error as Error).message).not.toContain('xoxb-wrong-token');
  });
});

describe('Slack native streaming', () => {
  let streamingFake: FakePlatformApi;
  const refusals: string[] = [];
  const client = () =>
    new SlackClient({
      token: streamingFake.tokens.slack,
      baseUrl: streamingFake.urls.slack,
      retry: FAST_RETRY,
      onStreamingRefused: (reason) => refusals.push(reason),
    });
  const recipient = { userId: 'U-asker', workspaceId: 'T-1' };
  const thread = { threadId: '1700000000.000100', messageId: '1700000000.000100' };
  beforeAll(async () => {
    streamingFake = await startFakePlatformApi({ slackNativeStreaming: true });
  });
  afterAll(() => streamingFake.close());

  it('starts a stream for the asker, appends to it and stops it; the message then holds the whole text', async () => {
    const slack = client();
    const target = answering('slack', 'C-stream', thread);
    const ts = await slack.streaming!.start(target, recipient, 'Hello');
    expect(ts).toMatch(/^\d+\.\d{6}$/);
    await slack.streaming!.append(target, ts!, ', **world**');
    await slack.streaming!.stop(target, ts!);
    const [start] = streamingFake.calls().filter((call) => call.method === 'chat.startStream');
    expect(start!.body).toEqual({
      channel: 'C-stream',
      thread_ts: thread.threadId,
      recipient_user_id: 'U-asker',
      recipient_team_id: 'T-1',
      markdown_text: 'Hello',
    });
    expect(streamingFake.message('slack', 'C-stream', ts!)).toMatchObject({
      text: 'Hello, **world**',
      streaming: 'completed',
    });
  });

  it('writes an agent’s mentions so that none can form, unless mentions are allowed', async () => {
    const target = answering('slack', 'C-stream-mentions', thread);
    const hostile = 'ping <!channel> and <@U123> via <https://evil.example|docs>';
    const ts = await client().streaming!.start(target, recipient, hostile);
    const sent = streamingFake.message('slack', 'C-stream-mentions', ts!)!.text;
    expect(sent).not.toMatch(/<[!@#h]/);
    expect(sent.replaceAll('\u2060', '')).toBe(hostile);
    const allowing = new SlackClient({
      token: streamingFake.tokens.slack,
      baseUrl: streamingFake.urls.slack,
      mentions: 'allow',
    });
    const allowed = await allowing.streaming!.start(target, recipient, hostile);
    expect(streamingFake.message('slack', 'C-stream-mentions', allowed!)!.text).toBe(hostile);
  });

  it('edits a stream nobody stopped (its worker died) by stopping it first; the text replaces its blocks', async () => {
    const slack = client();
    const target = answering('slack', 'C-stream-orphan', thread);
    const ts = await slack.streaming!.start(target, recipient, 'half a rep');
    await slack.edit(target, ts!, 'the **whole** reply');
    const methods = streamingFake
      .calls()
      .filter((call) => (call.body as { channel?: string }).channel === 'C-stream-orphan')
      .map((call) => `${call.method} ${call.status} ${(call.answer as { error?: string }).error ?? 'ok'}`);
    expect(methods).toEqual([
      'chat.startStream 200 ok',
      'chat.update 200 cant_update_message',
      'chat.stopStream 200 ok',
      'chat.update 200 ok',
    ]);
    const message = streamingFake.message('slack', 'C-stream-orphan', ts!)!;
    expect(message).toMatchObject({ text: 'the *whole* reply', streaming: 'completed' });
    expect(message.blocks).toBeUndefined();
  });

  it('needs the recipient’s workspace outside a direct message: none, no stream, no call', async () => {
    const before = streamingFake.calls().length;
    const target = answering('slack', 'C-stream-anon', thread);
    expect(await client().streaming!.start(target, { userId: 'U-asker' }, 'x')).toBeUndefined();
    expect(streamingFake.calls().length).toBe(before);
  });

  it('a workspace that cannot stream is told once; the client asks no more and the caller edits', async () => {
    // The shared fake has no streaming: Slack answers `unknown_method` there.
    const slack = new SlackClient({
      token: fake.tokens.slack,
      baseUrl: fake.urls.slack,
      retry: FAST_RETRY,
      onStreamingRefused: (reason) => refusals.push(reason),
    });
    const target = answering('slack', 'C-no-stream', thread);
    expect(await slack.streaming!.start(target, recipient, 'x')).toBeUndefined();
    expect(await slack.streaming!.start(target, recipient, 'y')).toBeUndefined();
    expect(refusals).toEqual([expect.stringContaining('unknown_method')]);
    expect(fake.calls().filter((call) => call.method === 'chat.startStream')).toHaveLength(1);
    expect(new SlackClient({ token: 'x', replyStreaming: 'edits' }).streaming).toBeUndefined();
  });
});

describe('classifySlackAnswer', () => {
  const answer = (status: number, body: unknown, headers: Record<string, string> = {}): PlatformAnswer => ({
    status,
    headers: new Headers(headers),
    body,
  });
  it.each<[string, PlatformAnswer, ReturnType<typeof classifySlackAnswer>]>([
    ['ok:true', answer(200, { ok: true, ts: '1.2' }), { kind: 'ok' }],
    ['already reacted', answer(200, { ok: false, error: 'already_reacted' }), { kind: 'ok' }],
    ['no reaction to remove', answer(200, { ok: false, error: 'no_reaction' }), { kind: 'ok' }],
    [
      'ratelimited',
      answer(200, { ok: false, error: 'ratelimited' }, { 'retry-after': '4' }),
      { kind: 'rate-limited', retryAfterMs: 4000, detail: 'Slack error ratelimited' },
    ],
    [
      '429',
      answer(429, { ok: false, error: 'ratelimited' }, { 'retry-after': '2' }),
      { kind: 'rate-limited', retryAfterMs: 2000, detail: 'rate limited (429)' },
    ],
    [
      'invalid_auth',
      answer(200, { ok: false, error: 'invalid_auth' }),
      { kind: 'failed', reason: 'auth', detail: 'Slack error invalid_auth', code: 'invalid_auth' },
    ],
    [
      'missing_scope',
      answer(200, { ok: false, error: 'missing_scope', needed: 'reactions:write' }),
      {
        kind: 'failed',
        reason: 'auth',
        detail: 'Slack error missing_scope (needs scope reactions:write)',
        code: 'missing_scope',
      },
    ],
    [
      'channel_not_found',
      answer(200, { ok: false, error: 'channel_not_found' }),
      {
        kind: 'failed',
        reason: 'not-found',
        detail: 'Slack error channel_not_found',
        code: 'channel_not_found',
      },
    ],
    [
      'msg_too_long',
      answer(200, { ok: false, error: 'msg_too_long' }),
      { kind: 'failed', reason: 'refused', detail: 'Slack error msg_too_long', code: 'msg_too_long' },
    ],
    [
      'not Slack',
      answer(200, '<html>'),
      { kind: 'failed', reason: 'refused', detail: 'Slack answered without ok: true or an error' },
    ],
    ['5xx', answer(503, undefined), { kind: 'transient', detail: 'HTTP 503' }],
  ])('%s', (_, given, expected) => {
    expect(classifySlackAnswer(given, 0)).toEqual(expected);
  });
});
