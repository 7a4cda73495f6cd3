import { describe, expect, it } from 'vitest';
import { signedSlackRequest, slack, slackMessage, TS } from './slack-inbound-fixtures.js';
import { messageOf, rejection, webhookRequest } from './support-inbound.js';

const parse = (event: Record<string, unknown> = {}) => slack.parse(signedSlackRequest(slackMessage(event)));

describe('Slack parse', () => {
  it('answers url_verification with its challenge', () => {
    const body = {
      token: 'x',
      challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P',
      type: 'url_verification',
    };
    expect(slack.parse(signedSlackRequest(body))).toEqual({
      kind: 'handshake',
      body: { challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' },
    });
  });

  it('turns a top-level message into an event whose replies start a thread on it', () => {
    expect(messageOf(parse())).toStrictEqual({
      event: {
        eventId: TS,
        platform: 'slack',
        channelId: 'C0CHAN',
        sender: { id: 'U0ALICE', name: 'U0ALICE', displayName: 'U0ALICE', isBot: false },
        timestamp: '2025-01-01T09:30:00.000Z',
        text: 'check the build',
        attachments: [],
        // The envelope's team: whom a natively streamed reply is for.
        workspaceId: 'T0TEAM',
      },
      thread: `slack:C0CHAN:${TS}`,
      idempotencyKey: `slack:C0CHAN:${TS}`,
      mentions: [],
      // The answers' address names the team too: its token answers (docs/adr/0061).
      ref: { platform: 'slack', channelId: 'C0CHAN', threadId: TS, messageId: TS, workspaceId: 'T0TEAM' },
      direct: false,
    });
  });

  it('puts a reply in the thread of its root', () => {
    const message = messageOf(parse({ ts: '1735723900.000300', thread_ts: TS }));
    expect(message.thread).toBe(`slack:C0CHAN:${TS}`);
    expect(message.idempotencyKey).toBe('slack:C0CHAN:1735723900.000300');
    expect(message.event.threadId).toBe(TS);
    expect(message.ref).toEqual({
      platform: 'slack',
      channelId: 'C0CHAN',
      threadId: TS,
      messageId: '1735723900.000300',
      workspaceId: 'T0TEAM',
    });
  });

  it('gives both deliveries of an @mention, message and app_mention, the same keys', () => {
    const text = '<@U0BOT> check the build';
    const asMessage = messageOf(parse({ text }));
    const asMention = messageOf(
      slack.parse(
        signedSlackRequest({
          ...slackMessage(),
          event_id: 'Ev0MENTION',
          event: { type: 'app_mention', user: 'U0ALICE', text, ts: TS, channel: 'C0CHAN', event_ts: TS },
        }),
      ),
    );
    expect(asMention.idempotencyKey).toBe(asMessage.idempotencyKey);
    expect(asMention.thread).toBe(asMessage.thread);
    expect(asMention.mentions).toEqual(['U0BOT']);
  });

  it('parses a retry (x-slack-retry-num) exactly like the first delivery', () => {
    const first = slack.parse(signedSlackRequest(slackMessage()));
    const retry = slack.parse(
      signedSlackRequest(slackMessage(), {
        'x-slack-retry-num': '1',
        'x-slack-retry-reason': 'http_timeout',
      }),
    );
    expect(retry).toStrictEqual(first);
  });

  it('keeps milliseconds of the ts and drops the microseconds', () => {
    expect(messageOf(parse({ ts: '1735723800.123999' })).event.timestamp).toBe('2025-01-01T09:30:00.123Z');
  });

  it('takes the names from user_profile, preferring the display name the user set', () => {
    const profile = { name: 'alice', real_name: 'Alice Liddell', display_name: '' };
    expect(messageOf(parse({ user_profile: profile })).event.sender).toEqual({
      id: 'U0ALICE',
      name: 'alice',
      displayName: 'Alice Liddell',
      isBot: false,
    });
    expect(
      messageOf(parse({ user_profile: { ...profile, display_name: 'Al' } })).event.sender.displayName,
    ).toBe('Al');
  });

  it('turns shared files into links, naming the file and its type', () => {
    const event = messageOf(
      parse({
        subtype: 'file_share',
        text: '',
        files: [
          {
            id: 'F1',
            name: 'build.log',
            mimetype: 'text/plain',
            url_private: 'https://files.slack.com/F1/build.log',
            size: 120,
          },
          { id: 'F2', title: 'screenshot', mimetype: 'image/png', url_private: 'https://files.slack.com/F2' },
          { id: 'F3', name: 'remote.pdf', file_access: 'check_file_info' },
        ],
      }),
    ).event;
    expect(event.text).toBe('');
    expect(event.attachments).toEqual([
      {
        kind: 'link',
        uri: 'https://files.slack.com/F1/build.log',
        name: 'build.log',
        mimeType: 'text/plain',
        source: { platform: 'slack', ref: 'https://files.slack.com/F1/build.log', size: 120 },
      },
      {
        kind: 'link',
        uri: 'https://files.slack.com/F2',
        name: 'screenshot',
        mimeType: 'image/png',
        source: { platform: 'slack', ref: 'https://files.slack.com/F2' },
      },
      { kind: 'link', uri: `tributary://attachment/${TS}/2/remote.pdf`, name: 'remote.pdf' },
    ]);
  });

  it.each([
    ['a plain message', {}],
    ['file_share', { subtype: 'file_share' }],
    ['thread_broadcast', { subtype: 'thread_broadcast', thread_ts: '1735723700.000100' }],
  ])('accepts %s from a person', (_label, event) => {
    expect(messageOf(parse(event)).event.sender.isBot).toBe(false);
  });

  it.each([
    [
      'bot_message',
      { subtype: 'bot_message', user: undefined, bot_id: 'B0OTHER', username: 'ci-bot' },
      'B0OTHER',
      'ci-bot',
    ],
    ['a message from another app', { bot_id: 'B0OTHER', user: 'U0OTHERBOT' }, 'U0OTHERBOT', 'U0OTHERBOT'],
  ])('parses %s as a bot message, leaving the decision to the gates', (_label, event, id, name) => {
    expect(messageOf(parse(event)).event.sender).toEqual({ id, name, displayName: name, isBot: true });
  });

  it.each([
    [
      'a message_changed nobody made (an unfurl)',
      { subtype: 'message_changed', message: { type: 'message', user: 'U0ALICE', text: 'x', ts: TS } },
      'slack message_changed without an edit',
    ],
    ['channel_join', { subtype: 'channel_join' }, 'slack message subtype channel_join'],
    ['our own message by user id', { user: 'U0BOT' }, 'slack message from ourselves'],
    ['our own message by bot id', { user: 'U0BOT2', bot_id: 'B0BOT' }, 'slack message from ourselves'],
    ['a reaction', { type: 'reaction_added' }, 'slack reaction_added event'],
  ])('ignores %s', (_label, event, reason) => {
    expect(parse(event)).toEqual({ kind: 'ignored', reason });
  });

  it('ignores deliveries that are not events', () => {
    expect(slack.parse(signedSlackRequest({ type: 'app_rate_limited', minute_rate_limited: 1 }))).toEqual({
      kind: 'ignored',
      reason: 'slack app_rate_limited delivery',
    });
  });

  it('reports each mentioned user once, in the order written', () => {
    const text = '<@U0BOT> ask <@W0BOB|bob> and <@U0BOT> about <#C0CHAN|general> <!here>';
    expect(messageOf(parse({ text })).mentions).toEqual(['U0BOT', 'W0BOB']);
  });

  it('finds mentions before a megabyte of half-open ones, which cannot match', () => {
    const text = `<@U0BOT|tributary> hi <@W0BOB> ${'<@U0BOT|'.repeat(128 * 1024)}`;
    expect(messageOf(parse({ text })).mentions).toEqual(['U0BOT', 'W0BOB']);
  });

  it.each([
    ['<@U0BOT> check the build', 'check the build'],
    ['  <@U0BOT>  <@U0BOT|tributary> check', 'check'],
    ['check the build <@U0BOT>', 'check the build'],
    [
      'You can count on <@U0BOT> for an honorable mention',
      'You can count on @tributary for an honorable mention',
    ],
    ['ask <@U0BOT|tributary>   now', 'ask @tributary   now'],
    ['<@U0BOTX> stays', '<@U0BOTX> stays'],
    ['<@U0ALICE> stays', '<@U0ALICE> stays'],
    ['line one\n<@U0BOT>\nline two', 'line one\n@tributary\nline two'],
  ])('stripSelfMention(%j) = %j', (text, stripped) => {
    expect(slack.stripSelfMention(text, 'U0BOT', 'tributary')).toBe(stripped);
  });

  it('keeps a mention in mid-sentence as written when our name is unknown', () => {
    expect(slack.stripSelfMention('<@U0BOT> ask <@U0BOT> twice', 'U0BOT')).toBe('ask <@U0BOT> twice');
  });

  it.each([
    ['a body that is not JSON (a form post)', 'token=x&command=%2Fcancel', 'body is not JSON'],
    ['a body that is not UTF-8', Buffer.from([0x7b, 0xff, 0x7d]), 'not valid UTF-8'],
    ['a JSON array', '[]', 'body must be a JSON object'],
    ['an event_callback without event', { type: 'event_callback' }, 'event is missing'],
    ['a message without ts', slackMessage({ ts: undefined }), 'event.ts is missing'],
    ['a garbled ts', slackMessage({ ts: '1735723800' }), 'event.ts must be a Slack ts'],
    ['a garbled thread_ts', slackMessage({ thread_ts: 'root' }), 'event.thread_ts must be a Slack ts'],
    ['a ts beyond year 9999', slackMessage({ ts: '999999999999.000000' }), 'event.ts is not a time'],
    ['a message without channel', slackMessage({ channel: undefined }), 'event.channel is missing'],
    ['a message without sender', slackMessage({ user: undefined }), 'event.user is missing'],
    ['a numeric text', slackMessage({ text: 42 }), 'event.text must be a string'],
    ['a lone surrogate in the text', slackMessage({ text: 'a\ud800' }), 'event.text must be well-formed'],
    ['files that are not a list', slackMessage({ files: {} }), 'event.files must be an array'],
    ['a file that is a string', slackMessage({ files: ['F1'] }), 'event.files[0] must be a JSON object'],
    ['a relative file URL', slackMessage({ files: [{ id: 'F1', url_private: '/F1' }] }), 'absolute URI'],
  ])('rejects %s, naming the field', (_label, body, problem) => {
    const raw = Buffer.isBuffer(body) ? body : typeof body === 'string' ? body : JSON.stringify(body);
    expect(rejection(() => slack.parse(webhookRequest(raw))).message).toContain(problem);
  });
});
