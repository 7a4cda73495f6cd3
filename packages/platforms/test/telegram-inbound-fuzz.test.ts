import { describe } from 'vitest';
import { fuzzAdapter, type Json } from './fuzz-inbound.js';
import { DATE, GROUP, telegram, telegramMessage, telegramRequest } from './telegram-inbound-fixtures.js';

const samples: Json[] = [
  telegramMessage(),
  telegramMessage({
    is_topic_message: true,
    message_thread_id: 3,
    text: '@bob @TributaryBot hi',
    entities: [
      { type: 'mention', offset: 0, length: 4 },
      { type: 'text_mention', offset: 5, length: 3, user: { id: 9, is_bot: false, first_name: 'B' } },
    ],
    reply_to_message: { message_id: 1, chat: { id: GROUP, type: 'supergroup' }, date: DATE, text: 'root' },
  }),
  telegramMessage({ text: undefined, caption: 'c', photo: [{ file_id: 'p1' }], document: { file_id: 'd1' } }),
  {
    update_id: 2,
    channel_post: { message_id: 1, chat: { id: -5, type: 'channel', title: 'T' }, date: DATE, text: 'x' },
  },
];

describe('Telegram adapter under fuzzing', () => {
  fuzzAdapter({
    adapter: telegram,
    samples,
    sign: telegramRequest,
    headerNames: ['x-telegram-bot-api-secret-token'],
  });
});
