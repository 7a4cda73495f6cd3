import { shownText, waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postSlackEvent, STACK_SECRETS, type Stack, startStack } from './stack-fixture.js';

let stack: Stack;
beforeAll(async () => {
  // As shipped deployments start: no identity variables, only tokens.
  stack = await startStack({
    SLACK_BOT_USER_ID: '',
    TELEGRAM_BOT_USERNAME: '',
    DISCORD_BOT_USER_ID: '',
    REPLY_STREAM_INTERVAL_MS: '0',
  });
  stack.api.seedSlackUser({ id: 'U2', name: 'grace', realName: 'Grace Hopper', displayName: 'grace.h' });
}, 60_000);
afterAll(() => stack.close());

async function replyText(platform: string, method: string, pick: (body: unknown) => string | undefined) {
  let text: string | undefined;
  await waitFor(
    () => {
      text = stack
        .calls(platform, method)
        .map((call) => pick(call.body))
        .find(Boolean);
      return text !== undefined;
    },
    { what: `a ${platform} reply`, timeoutMs: 30_000 },
  );
  return text!;
}

describe('bot identity discovered at start-up', () => {
  it('answers a Slack app_mention, our mid-sentence mention kept as our name, the sender by name', async () => {
    const { userId, name } = stack.api.bots.slack;
    const event = {
      type: 'app_mention',
      user: 'U2',
      text: `<@${userId}> is <@${userId}> awake?`,
      ts: '1735724000.000100',
      channel: 'CIDENT',
      event_ts: '1735724000.000100',
    };
    const body = JSON.stringify({
      type: 'event_callback',
      team_id: 'T1',
      api_app_id: 'A1',
      event,
      event_id: 'EvIDENT',
      event_time: 1735724000,
    });
    const answer = await postSlackEvent(stack, body);
    expect(answer.body).toMatchObject({ outcome: 'accepted' });
    const reply = await replyText('slack', 'chat.postMessage', (b) => {
      const post = b as { channel: string };
      return post.channel === 'CIDENT' ? shownText({ platform: 'slack', body: b }) : undefined;
    });
    expect(reply).toContain(`1. grace.h (U2, slack CIDENT): no attachments — "is @${name} awake?"`);
    expect(stack.calls('slack', 'users.info').map((call) => call.body)).toEqual([{ user: 'U2' }]);
  });

  it('answers a Telegram group mention of the username getMe gave', async () => {
    const { username } = stack.api.bots.telegram;
    const text = `@${username} hello there`;
    const body = JSON.stringify({
      update_id: 9001,
      message: {
        message_id: 9001,
        date: Math.floor(Date.now() / 1000),
        chat: { id: -100_900, type: 'supergroup', title: 'team' },
        from: { id: 42, is_bot: false, first_name: 'Ada', last_name: 'Lovelace', username: 'ada' },
        text,
        entities: [{ type: 'mention', offset: 0, length: username.length + 1 }],
      },
    });
    const answer = await stack.post('/webhooks/telegram', body, {
      'x-telegram-bot-api-secret-token': STACK_SECRETS.TELEGRAM_SECRET_TOKEN,
    });
    expect(answer.body).toMatchObject({ outcome: 'accepted' });
    const reply = await replyText('telegram', 'sendMessage', (b) => {
      const post = b as { chat_id: number };
      return post.chat_id === -100_900 ? shownText({ platform: 'telegram', body: b }) : undefined;
    });
    expect(reply).toContain('1. Ada Lovelace (42, telegram -100900): no attachments — "hello there"');
  });
});
