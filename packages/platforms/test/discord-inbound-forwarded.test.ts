import { describe, expect, it } from 'vitest';
import {
  BOT_USER,
  CHANNEL,
  forwarded,
  forwardedBody,
  signedForward,
  THREAD,
} from './discord-inbound-fixtures.js';
import { messageOf, rejection, webhookRequest } from './support-inbound.js';

const parse = (...args: Parameters<typeof forwardedBody>) =>
  forwarded.parse(signedForward(forwardedBody(...args)));

describe('Discord forwarded message verification', () => {
  it('accepts a body signed with the forwarder secret', () => {
    expect(forwarded.verify(signedForward(forwardedBody()))).toEqual({ ok: true });
  });

  it.each([
    [
      'a changed body',
      (raw: string) => webhookRequest(`${raw} `, signedForward(raw).headers),
      'does not match',
    ],
    ['another secret', (raw: string) => signedForward(raw, 'other-secret'), 'does not match'],
    [
      'no signature header',
      (raw: string) =>
        webhookRequest(raw, { 'x-tributary-timestamp': signedForward(raw).headers['x-tributary-timestamp'] }),
      'missing x-tributary-signature',
    ],
    ['no timestamp header', (raw: string) => webhookRequest(raw, {}), 'missing x-tributary-timestamp'],
    [
      'a bare hex signature',
      (raw: string) =>
        webhookRequest(raw, {
          ...signedForward(raw).headers,
          'x-tributary-signature': signedForward(raw).headers['x-tributary-signature']!.slice(3),
        }),
      'does not match',
    ],
  ])('rejects %s', (_label, request, reason) => {
    const verification = forwarded.verify(request(JSON.stringify(forwardedBody())));
    expect(verification.ok).toBe(false);
    expect(verification.ok === false && verification.reason).toContain(reason);
  });
});

describe('Discord forwarded message parse', () => {
  it('turns a channel message into an event, with the time normalised to UTC milliseconds', () => {
    expect(messageOf(parse())).toStrictEqual({
      event: {
        eventId: '800000000000000008',
        platform: 'discord',
        channelId: CHANNEL,
        sender: { id: '110000000000000011', name: 'alice', displayName: 'Alice Liddell', isBot: false },
        timestamp: '2025-01-01T09:30:00.123Z',
        text: 'check the build',
        attachments: [],
        // The guild, for routes that name one.
        workspaceId: '900000000000000009',
      },
      thread: `discord:${CHANNEL}`,
      idempotencyKey: `discord:${CHANNEL}:800000000000000008`,
      mentions: [],
      ref: { platform: 'discord', channelId: CHANNEL, messageId: '800000000000000008' },
      direct: false,
    });
  });

  it('puts a message in a thread under the parent channel, the thread being its own conversation', () => {
    const message = messageOf(parse({ channel_id: THREAD }, { id: THREAD, parent_id: CHANNEL, type: 11 }));
    expect(message.event.channelId).toBe(CHANNEL);
    expect(message.event.threadId).toBe(THREAD);
    expect(message.thread).toBe(`discord:${THREAD}`);
    expect(message.idempotencyKey).toBe(`discord:${THREAD}:800000000000000008`);
    expect(message.ref).toEqual({
      platform: 'discord',
      channelId: CHANNEL,
      threadId: THREAD,
      messageId: '800000000000000008',
    });
  });

  it.each([
    ['+00:00 with microseconds', '2025-01-01T09:30:00.123456+00:00', '2025-01-01T09:30:00.123Z'],
    ['no fraction', '2025-01-01T09:30:00+00:00', '2025-01-01T09:30:00.000Z'],
    ['another offset', '2025-01-01T10:30:00.5+01:00', '2025-01-01T09:30:00.500Z'],
  ])('normalises a timestamp with %s', (_label, timestamp, iso) => {
    expect(messageOf(parse({ timestamp })).event.timestamp).toBe(iso);
  });

  it('prefers the member nickname for the display name, and marks bots', () => {
    const sender = messageOf(
      parse({ member: { nick: 'Al' }, author: { id: '12', username: 'ci', bot: true } }),
    ).event.sender;
    expect(sender).toEqual({ id: '12', name: 'ci', displayName: 'Al', isBot: true });
  });

  it('passes attachments as links and reports mentioned users', () => {
    const message = messageOf(
      parse({
        content: `<@${BOT_USER}> what is this`,
        attachments: [
          {
            id: '1',
            filename: 'shot.png',
            url: 'https://cdn.discordapp.com/attachments/1/shot.png',
            content_type: 'image/png',
            size: 10,
          },
          { id: '2', filename: 'notes', url: 'https://cdn.discordapp.com/attachments/2/notes', size: 3 },
        ],
        mentions: [
          { id: BOT_USER, username: 'tributary', bot: true },
          { id: '13', username: 'bob' },
        ],
      }),
    );
    expect(message.event.attachments).toEqual([
      {
        kind: 'link',
        uri: 'https://cdn.discordapp.com/attachments/1/shot.png',
        name: 'shot.png',
        mimeType: 'image/png',
        source: { platform: 'discord', ref: 'https://cdn.discordapp.com/attachments/1/shot.png', size: 10 },
      },
      {
        kind: 'link',
        uri: 'https://cdn.discordapp.com/attachments/2/notes',
        name: 'notes',
        source: { platform: 'discord', ref: 'https://cdn.discordapp.com/attachments/2/notes', size: 3 },
      },
    ]);
    expect(message.mentions).toEqual([BOT_USER, '13']);
  });

  it('accepts replies (type 19)', () => {
    expect(parse({ type: 19 }).kind).toBe('message');
  });

  it.each([
    [
      'our own message',
      { author: { id: BOT_USER, username: 'tributary', bot: true } },
      'discord message from ourselves',
    ],
    ['a member joining', { type: 7 }, 'discord message type 7'],
    ['a pin notice', { type: 6 }, 'discord message type 6'],
  ])('ignores %s', (_label, message, reason) => {
    expect(parse(message)).toEqual({ kind: 'ignored', reason });
  });

  it.each([
    [
      'another schema',
      { ...forwardedBody(), schema: 'tributary.discord.forwarded.v2' },
      'schema must be tributary.discord.forwarded.v1',
    ],
    ['a body without channel', { ...forwardedBody(), channel: undefined }, 'channel is missing'],
    [
      'a channel that is not the message channel',
      forwardedBody({}, { id: THREAD }),
      'channel.id must equal message.channel_id',
    ],
    [
      'a message id that is not a snowflake',
      forwardedBody({ id: 'abc' }),
      'message.id must be a Discord snowflake',
    ],
    [
      'a timestamp without offset',
      forwardedBody({ timestamp: '2025-01-01T09:30:00' }),
      'message.timestamp must be an RFC 3339 time',
    ],
    ['content that is not text', forwardedBody({ content: null }), 'message.content is missing'],
    [
      'an attachment without URL',
      forwardedBody({ attachments: [{ id: '1', filename: 'a' }] }),
      'message.attachments[0].url is missing',
    ],
    [
      'a mention without id',
      forwardedBody({ mentions: [{ username: 'bob' }] }),
      'message.mentions[0].id is missing',
    ],
    [
      'a thread without parent',
      forwardedBody({ channel_id: THREAD }, { id: THREAD, parent_id: null, type: 12 }),
      'channel.parent_id is missing',
    ],
  ])('rejects %s, naming the field', (_label, body, problem) => {
    expect(rejection(() => forwarded.parse(signedForward(body))).message).toContain(problem);
  });

  it.each([
    [`<@${BOT_USER}> check`, 'check'],
    [`<@!${BOT_USER}> check`, 'check'],
    ['<@13> check', '<@13> check'],
    [`ask <@!${BOT_USER}> later`, 'ask @tributary later'],
  ])('stripSelfMention(%j) = %j', (text, stripped) => {
    expect(forwarded.stripSelfMention(text, BOT_USER, 'tributary')).toBe(stripped);
  });
});
