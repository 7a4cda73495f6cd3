import { describe, expect, it } from 'vitest';
import { TELEGRAM_MAX_AGE_MS, TelegramInboundAdapter } from '../src/index.js';
import { messageOf, rejection, webhookRequest } from './support-inbound.js';
import {
  alice,
  DATE,
  GROUP,
  SECRET_TOKEN,
  telegram,
  telegramMessage,
  telegramRequest,
} from './telegram-inbound-fixtures.js';

const parse = (message: Record<string, unknown> = {}) =>
  telegram.parse(telegramRequest(telegramMessage(message)));

describe('Telegram parse', () => {
  it('turns a group message into an event in the chat-wide thread', () => {
    expect(messageOf(parse())).toStrictEqual({
      event: {
        eventId: '42',
        platform: 'telegram',
        channelId: String(GROUP),
        sender: { id: '111', name: 'alice', displayName: 'Alice Liddell', isBot: false },
        timestamp: '2025-01-01T09:30:00.000Z',
        text: 'check the build',
        attachments: [],
      },
      thread: `telegram:${GROUP}:main`,
      idempotencyKey: `telegram:${GROUP}:42`,
      mentions: [],
      ref: { platform: 'telegram', channelId: String(GROUP), messageId: '42' },
      direct: false,
    });
  });

  it('gives a repeated update the same dedup key, and so a re-sent message under a new update_id', () => {
    const first = messageOf(telegram.parse(telegramRequest(telegramMessage({}, 5001))));
    expect(messageOf(telegram.parse(telegramRequest(telegramMessage({}, 5001))))).toStrictEqual(first);
    expect(messageOf(telegram.parse(telegramRequest(telegramMessage({}, 5002)))).idempotencyKey).toBe(
      first.idempotencyKey,
    );
  });

  it('makes a forum topic its own thread', () => {
    const message = messageOf(parse({ message_thread_id: 7, is_topic_message: true }));
    expect(message.thread).toBe(`telegram:${GROUP}:7`);
    expect(message.event.threadId).toBe('7');
    expect(message.ref).toEqual({
      platform: 'telegram',
      channelId: String(GROUP),
      threadId: '7',
      messageId: '42',
    });
  });

  it('keeps a reply chain in the chat-wide thread and delivers the replied-to message as the parent', () => {
    const replied = {
      message_id: 40,
      from: { id: 222, is_bot: false, first_name: 'Bob' },
      chat: { id: GROUP, type: 'supergroup' },
      date: DATE - 60,
      text: 'the build is red',
    };
    // Outside forums Telegram still sets message_thread_id on replies; it is not a topic.
    const message = messageOf(parse({ reply_to_message: replied, message_thread_id: 40 }));
    expect(message.thread).toBe(`telegram:${GROUP}:main`);
    expect(message.event.threadId).toBeUndefined();
    expect(message.parent).toEqual({
      messageId: '40',
      senderId: '222',
      senderName: 'Bob',
      text: 'the build is red',
      timestamp: '2025-01-01T09:29:00.000Z',
    });
  });

  it('treats a reply to the bot as a mention of it', () => {
    const replied = {
      message_id: 41,
      from: { id: 999, is_bot: true, first_name: 'Tributary', username: 'tributarybot' },
      chat: { id: GROUP, type: 'supergroup' },
      date: DATE - 5,
      text: 'done',
    };
    expect(messageOf(parse({ reply_to_message: replied })).mentions).toEqual(['TributaryBot']);
  });

  it('reads mentions from entities, reporting the bot under its configured spelling', () => {
    const text = '@tributarybot ask @bob and Ann';
    const entities = [
      { type: 'mention', offset: 0, length: 13 },
      { type: 'mention', offset: 18, length: 4 },
      { type: 'text_mention', offset: 27, length: 3, user: { id: 333, is_bot: false, first_name: 'Ann' } },
      { type: 'bold', offset: 14, length: 3 },
    ];
    expect(messageOf(parse({ text, entities })).mentions).toEqual(['TributaryBot', 'bob', '333']);
  });

  it('counts entity offsets in UTF-16 code units, as Telegram does', () => {
    const text = '🦀 @bob';
    expect(
      messageOf(parse({ text, entities: [{ type: 'mention', offset: 3, length: 4 }] })).mentions,
    ).toEqual(['bob']);
  });

  it('uses the caption and its entities for media messages, and passes files by id, never by URL', () => {
    const event = messageOf(
      parse({
        text: undefined,
        caption: '@TributaryBot what is this?',
        caption_entities: [{ type: 'mention', offset: 0, length: 13 }],
        photo: [
          { file_id: 'AgAD-small', file_unique_id: 's', width: 90, height: 90 },
          { file_id: 'AgAD-large', file_unique_id: 'l', width: 1280, height: 1280 },
        ],
      }),
    );
    expect(event.event.text).toBe('@TributaryBot what is this?');
    expect(event.mentions).toEqual(['TributaryBot']);
    expect(event.event.attachments).toEqual([
      {
        kind: 'link',
        uri: 'tg://file/AgAD-large',
        name: 'photo',
        mimeType: 'image/jpeg',
        source: { platform: 'telegram', ref: 'AgAD-large' },
      },
    ]);
  });

  it.each([
    [
      'a document',
      { document: { file_id: 'BQAD1', file_name: 'build.log', mime_type: 'text/plain' } },
      {
        kind: 'link',
        uri: 'tg://file/BQAD1',
        name: 'build.log',
        mimeType: 'text/plain',
        source: { platform: 'telegram', ref: 'BQAD1' },
      },
    ],
    [
      'a voice note',
      { voice: { file_id: 'AwAD2', duration: 3, mime_type: 'audio/ogg' } },
      {
        kind: 'link',
        uri: 'tg://file/AwAD2',
        name: 'voice',
        mimeType: 'audio/ogg',
        source: { platform: 'telegram', ref: 'AwAD2' },
      },
    ],
    [
      'a sticker',
      { sticker: { file_id: 'CAAD3', type: 'regular' } },
      {
        kind: 'link',
        uri: 'tg://file/CAAD3',
        name: 'sticker',
        source: { platform: 'telegram', ref: 'CAAD3' },
      },
    ],
  ])('passes %s as a link', (_label, media, link) => {
    const event = messageOf(parse({ text: undefined, ...media })).event;
    expect(event.text).toBe('');
    expect(event.attachments).toEqual([link]);
  });

  it('takes a channel post from the channel itself', () => {
    const body = {
      update_id: 9,
      channel_post: {
        message_id: 5,
        sender_chat: { id: -100777, type: 'channel', title: 'Releases', username: 'releases' },
        chat: { id: -100777, type: 'channel', title: 'Releases', username: 'releases' },
        date: DATE,
        text: 'v2 is out',
      },
    };
    const message = messageOf(telegram.parse(telegramRequest(body)));
    expect(message.event.sender).toEqual({
      id: '-100777',
      name: 'releases',
      displayName: 'Releases',
      isBot: false,
    });
    expect(message.thread).toBe('telegram:-100777:main');
  });

  it('credits a message an anonymous admin sent on behalf of the group to the group', () => {
    const message = messageOf(
      parse({
        from: { id: 1087968824, is_bot: true, first_name: 'Group', username: 'GroupAnonymousBot' },
        sender_chat: { id: GROUP, type: 'supergroup', title: 'Builds' },
      }),
    );
    expect(message.event.sender).toEqual({
      id: String(GROUP),
      name: 'Builds',
      displayName: 'Builds',
      isBot: false,
    });
  });

  it('marks messages from bots', () => {
    expect(
      messageOf(parse({ from: { id: 5, is_bot: true, first_name: 'CI', username: 'ci_bot' } })).event.sender
        .isBot,
    ).toBe(true);
  });

  it.each([
    [
      'a reaction',
      { update_id: 1, message_reaction: { chat: { id: GROUP, type: 'supergroup' }, message_id: 42 } },
      'telegram message_reaction update',
    ],
    [
      'a callback query of a button that is not ours',
      { update_id: 1, callback_query: { id: 'q', from: alice, data: 'vote:3' } },
      'telegram callback_query of a button that is not ours',
    ],
    [
      'a callback query of a message too old to show',
      { update_id: 1, callback_query: { id: 'q', from: alice, data: 'ap:abc:0' } },
      'telegram callback_query of a message too old to show',
    ],
    [
      'a new member',
      { update_id: 1, message: { ...telegramMessage().message, text: undefined, new_chat_members: [alice] } },
      'telegram message without text or files (a service message, poll, location, …)',
    ],
  ])('ignores %s', (_label, body, reason) => {
    expect(telegram.parse(telegramRequest(body))).toEqual({ kind: 'ignored', reason });
  });

  it.each([
    ['@TributaryBot check the build', 'check the build'],
    ['@tributarybot check the build', 'check the build'],
    ['check the build @TRIBUTARYBOT', 'check the build'],
    ['you can count on @tributarybot for that', 'you can count on @TributaryBot for that'],
    ['/cancel@TributaryBot', '/cancel@TributaryBot'],
    ['@TributaryBotFan hi', '@TributaryBotFan hi'],
    ['mail me@TributaryBot', 'mail me@TributaryBot'],
    ['ask @alice', 'ask @alice'],
  ])('stripSelfMention(%j) = %j', (text, stripped) => {
    expect(telegram.stripSelfMention(text, 'TributaryBot')).toBe(stripped);
  });

  it.each([
    ['an update without update_id', { message: telegramMessage().message }, 'update_id is missing'],
    ['an update with nothing in it', { update_id: 1 }, 'carries nothing'],
    ['a message without chat', telegramMessage({ chat: undefined }), 'message.chat is missing'],
    [
      'a chat id that is a string',
      telegramMessage({ chat: { id: '-100', type: 'group' } }),
      'message.chat.id must be an integer',
    ],
    ['a fractional date', telegramMessage({ date: 1.5 }), 'message.date must be an integer'],
    ['a negative date', telegramMessage({ date: -1 }), 'message.date is not a time'],
    [
      'a topic message without thread id',
      telegramMessage({ is_topic_message: true }),
      'message.message_thread_id is missing',
    ],
    [
      'a mention outside the text',
      telegramMessage({ entities: [{ type: 'mention', offset: 10, length: 40 }] }),
      'message.entities[0].offset',
    ],
    ['a lone surrogate', telegramMessage({ text: '\udc00' }), 'message.text must be well-formed'],
    [
      'a sender without first name',
      telegramMessage({ from: { id: 1, is_bot: false } }),
      'message.from.first_name is missing',
    ],
    [
      'a file without id',
      telegramMessage({ document: { file_name: 'a' } }),
      'message.document.file_id is missing',
    ],
  ])('rejects %s, naming the field', (_label, body, problem) => {
    expect(rejection(() => telegram.parse(telegramRequest(body))).message).toContain(problem);
  });
});

describe('the freshness window of Telegram updates', () => {
  const window = (maxAgeMs?: number) =>
    new TelegramInboundAdapter({ secretToken: SECRET_TOKEN, ...(maxAgeMs ? { maxAgeMs } : {}) });
  const at = (now: number, update: unknown, adapter = window()) =>
    adapter.parse(webhookRequest(update, { 'x-telegram-bot-api-secret-token': SECRET_TOKEN }, now));
  const sent = DATE * 1000;

  it('takes a message up to a day old by default, and ignores an older one (a replay)', () => {
    expect(at(sent + TELEGRAM_MAX_AGE_MS, telegramMessage()).kind).toBe('message');
    const stale = at(sent + TELEGRAM_MAX_AGE_MS + 1_000, telegramMessage());
    expect(stale).toMatchObject({ kind: 'ignored', reason: expect.stringContaining('freshness window') });
    // An update dated 2001, delivered now.
    expect(at(Date.now(), telegramMessage({ date: 978_307_200 })).kind).toBe('ignored');
  });

  it('measures an edit by when it was edited, and keeps to a configured window', () => {
    const edit = { update_id: 9, edited_message: { ...telegramMessage().message, edit_date: DATE + 3_600 } };
    expect(at(sent + TELEGRAM_MAX_AGE_MS + 60_000, edit).kind).toBe('edit');
    expect(at(sent + 120_000, telegramMessage(), window(60_000)).kind).toBe('ignored');
    expect(at(sent + 30_000, telegramMessage(), window(60_000)).kind).toBe('message');
  });
});

describe('a click on a permission request', () => {
  it('is an approval naming the request, the option and the clicker, answered in the webhook response', () => {
    const inbound = telegram.parse(
      telegramRequest({
        update_id: 2,
        callback_query: {
          id: '4382bfdwdsb323b2d9',
          from: alice,
          message: {
            message_id: 77,
            date: 1_735_689_600,
            chat: { id: GROUP, type: 'supergroup' },
            message_thread_id: 5,
          },
          chat_instance: '-12',
          data: 'ap:Zm9vYmFy:2',
        },
      }),
    );
    expect(inbound).toMatchObject({
      kind: 'approval',
      approvalId: 'Zm9vYmFy',
      option: 2,
      userId: String(alice.id),
      ref: { platform: 'telegram', channelId: String(GROUP), threadId: '5', messageId: '77' },
      idempotencyKey: 'telegram:callback:4382bfdwdsb323b2d9',
      privately: true,
    });
    if (inbound.kind !== 'approval') throw new Error('not an approval');
    expect(inbound.respond(undefined)).toEqual({
      method: 'answerCallbackQuery',
      callback_query_id: '4382bfdwdsb323b2d9',
    });
    expect(inbound.respond('No.')).toEqual({
      method: 'answerCallbackQuery',
      callback_query_id: '4382bfdwdsb323b2d9',
      text: 'No.',
      show_alert: true,
    });
  });
});
