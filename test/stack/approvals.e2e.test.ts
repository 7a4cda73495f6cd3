import { slackSignature } from '@tributary/platforms';
import { Store } from '@tributary/queue';
import { type FakeApiCall, shownText, waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  postDiscordForwarded,
  postDiscordInteraction,
  postSlackEvent,
  postTelegramMessage,
  STACK_SECRETS,
  type Stack,
  startStack,
} from './stack-fixture.js';

const TIMEOUT_MS = 4_000;

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({
    AGENT_PERMISSION_POLICY: 'ask',
    APPROVAL_TIMEOUT_MS: String(TIMEOUT_MS),
    APPROVERS: 'telegram:99,discord:role:555,telegram:group:admins,slack:group:SAPPROVERS',
  });
  stack.api.seedSlackUserGroup('SAPPROVERS', ['U7', 'U3']);
});
afterAll(() => stack.close());

let ids = 0;

/** A Telegram group of its own; Ada (42) starts each conversation in it. */
function group() {
  const chatId = -7000 - ++ids;
  const edited = () =>
    stack
      .calls('telegram', 'editMessageText')
      .filter((call) => (call.body as { chat_id: number }).chat_id === chatId);
  const sent = () =>
    stack
      .calls('telegram', 'sendMessage')
      .filter((call) => (call.body as { chat_id: number }).chat_id === chatId);
  return {
    chatId,
    thread: `telegram:${chatId}:main`,
    async say(text: string) {
      const answer = await postTelegramMessage(stack, chatId, 70_000 + ++ids, text);
      expect(answer.status).toBe(200);
      return answer.body;
    },
    /** The permission request's message, once posted, with its buttons' data. */
    async request(): Promise<{ messageId: number; buttons: { text: string; data: string }[] }> {
      let asked: FakeApiCall | undefined;
      await waitFor(
        () => {
          asked = sent().find((call) => (call.body as { reply_markup?: unknown }).reply_markup !== undefined);
          return asked !== undefined;
        },
        { what: 'the permission request in the chat' },
      );
      const body = asked!.body as {
        reply_markup: { inline_keyboard: { text: string; callback_data: string }[][] };
      };
      return {
        messageId: (asked!.answer as { result: { message_id: number } }).result.message_id,
        buttons: body.reply_markup.inline_keyboard
          .flat()
          .map((b) => ({ text: b.text, data: b.callback_data })),
      };
    },
    /** A click as Telegram delivers it: a callback_query update from `userId`. */
    async click(userId: number, messageId: number, data: string) {
      const update = ++ids;
      const body = JSON.stringify({
        update_id: 900_000 + update,
        callback_query: {
          id: `cb-${update}`,
          from: {
            id: userId,
            is_bot: false,
            first_name: userId === 42 ? 'Ada' : 'Mallory',
            username: `user${userId}`,
          },
          message: {
            message_id: messageId,
            date: Math.floor(Date.now() / 1000),
            chat: { id: chatId, type: 'supergroup', title: 'team' },
            text: 'The agent asks',
          },
          chat_instance: '-4242',
          data,
        },
      });
      const answer = await stack.post('/webhooks/telegram', body, {
        'x-telegram-bot-api-secret-token': STACK_SECRETS.TELEGRAM_SECRET_TOKEN,
      });
      expect(answer.status).toBe(200);
      return answer.body;
    },
    shown: () => sent().map((call) => shownText(call) ?? ''),
    /**
     * Every text the chat showed, posts and edits: a turn that outlasts the group's edit pace has its
     * reply as the edit of a streamed message.
     */
    chat: () => [...sent(), ...edited()].map((call) => shownText(call) ?? ''),
    /** Edits of the message `messageId`. */
    editsOf: (messageId: number) =>
      edited().filter((call) => (call.body as { message_id: number }).message_id === messageId),
    edits: () => edited().map((call) => shownText(call) ?? ''),
  };
}

describe('permission requests put to the thread (Telegram)', () => {
  it('the starter’s click answers the agent, once; the message says who answered what', async () => {
    const g = group();
    await g.say('@tributary_bot run it\n@agent {"permission": true}');
    const request = await g.request();
    expect(request.buttons.map((button) => button.text)).toEqual([
      'allow_once',
      'allow_always',
      'reject_once',
      'reject_always',
    ]);
    const allowOnce = request.buttons[0]!.data;
    expect(Buffer.byteLength(allowOnce)).toBeLessThanOrEqual(64);
    expect(await g.click(42, request.messageId, allowOnce)).toEqual({
      method: 'answerCallbackQuery',
      callback_query_id: expect.stringMatching(/^cb-/),
    });
    await waitFor(() => g.chat().some((text) => text.includes('permission: selected allow-once')), {
      what: 'the agent’s reply after the answer',
    });
    expect(g.edits()).toContain('✅ allow_once, by user42: Scripted execute tool');
    // Kept in the operators' audit log too: who, what, when.
    const store = Store.open({
      url: stack.redisUrl,
      connection: { kind: 'patient' },
      queue: { prefix: stack.prefix },
    });
    const [entry] = (await store.audit.list(undefined, 10)).items.filter(
      (item) => item.action === 'approvals.answer',
    );
    await store.close();
    expect(entry).toMatchObject({
      actor: 'telegram:42',
      outcome: 'ok',
      target: { thread: g.thread, option: 'allow_once', title: 'Scripted execute tool' },
    });
    expect(entry!.at).toBeGreaterThan(0);
    // A second click finds it answered, and changes nothing.
    expect(await g.click(42, request.messageId, request.buttons[2]!.data)).toMatchObject({
      text: 'Already answered: allow_once, by 42.',
      show_alert: true,
    });
  });

  it('someone else is told privately and nothing changes; an approver may answer', async () => {
    const g = group();
    await g.say('@tributary_bot run it\n@agent {"permission": true}');
    const request = await g.request();
    expect(await g.click(77, request.messageId, request.buttons[0]!.data)).toMatchObject({
      method: 'answerCallbackQuery',
      text: 'Only the person who started this conversation or an approver can answer this request.',
      show_alert: true,
    });
    expect(g.editsOf(request.messageId)).toEqual([]);
    expect(await g.click(99, request.messageId, request.buttons[2]!.data)).not.toHaveProperty('text');
    await waitFor(() => g.chat().some((text) => text.includes('permission: selected reject-once')), {
      what: 'the refusal reaching the agent',
    });
  });

  it('an administrator of the chat may answer; a lookup Telegram refuses is told, not taken as a yes', async () => {
    const g = group();
    stack.api.seedTelegramMember(g.chatId, 55, 'administrator');
    await g.say('@tributary_bot run it\n@agent {"permission": true}');
    const request = await g.request();
    stack.api.failNext({
      platform: 'telegram',
      method: 'getChatMember',
      status: 403,
      error: 'Forbidden: bot is not a member of the supergroup chat',
    });
    expect(await g.click(55, request.messageId, request.buttons[0]!.data)).toMatchObject({
      text: 'Your approver groups could not be checked just now; nothing was applied. Try again in a moment.',
      show_alert: true,
    });
    expect(g.editsOf(request.messageId)).toEqual([]);
    expect(stack.warnings().map((line) => line.msg)).toContain(
      "approver groups not looked up; the click was refused for now (check the bot's scopes)",
    );
    expect(await stack.ingressMetrics.registry.metrics()).toMatch(
      /tributary_approval_clicks_total\{platform="telegram",result="unchecked"\} 1/,
    );
    expect(await g.click(55, request.messageId, request.buttons[0]!.data)).not.toHaveProperty('text');
    await waitFor(() => g.chat().some((text) => text.includes('permission: selected allow-once')), {
      what: 'the administrator’s answer reaching the agent',
    });
    const asked = stack.calls('telegram', 'getChatMember').map((call) => call.body);
    expect(asked.at(-1)).toEqual({ chat_id: g.chatId, user_id: 55 });
  });

  it('nobody answers: the fallback refuses, and the thread is told', async () => {
    const g = group();
    await g.say('@tributary_bot run it\n@agent {"permission": true}');
    const request = await g.request();
    await waitFor(() => g.chat().some((text) => text.includes('permission: selected reject-once')), {
      what: () => `the fallback’s answer after the time-out; the chat shows ${JSON.stringify(g.chat())}`,
      timeoutMs: TIMEOUT_MS + 15_000,
    });
    const told = `⏱ Nobody answered in ${TIMEOUT_MS / 1000} s, so the request was answered reject_once: Scripted execute tool`;
    expect(g.shown()).toContain(told);
    expect(g.edits()).toContain(told);
    expect(await g.click(42, request.messageId, request.buttons[0]!.data)).toMatchObject({
      text: 'Nobody answered in time; the request was settled without you.',
    });
    // A warning and a metric, as every failure has.
    expect(stack.warnings().map((line) => line.msg)).toContain(
      'nobody answered the permission request in time; the fallback answered it',
    );
    const metrics = await stack.workerMetrics.registry.metrics();
    expect(metrics).toMatch(
      /tributary_approval_outcomes_total\{platform="telegram",outcome="timed_out"\} [1-9]/,
    );
    expect(metrics).toMatch(/tributary_approval_requests_total\{platform="telegram"\} [3-9]/);
  });

  it('a cancelled turn answers cancelled; a click after it is told the request ended', async () => {
    const g = group();
    await g.say('@tributary_bot run it\n@agent {"permission": true}');
    const request = await g.request();
    expect(await g.say('/cancel')).toMatchObject({ outcome: 'control', command: 'cancel' });
    await waitFor(() => g.edits().includes('⏹ Cancelled with its turn: Scripted execute tool'), {
      what: 'the request to say it was cancelled',
    });
    expect(await g.click(42, request.messageId, request.buttons[0]!.data)).toMatchObject({
      text: 'This request has ended; nothing was applied.',
    });
  });
});

describe('permission requests put to the thread (Slack)', () => {
  const channel = 'CAPPROVE';
  const root = '1700600000.000100';

  function inChannel(method: string) {
    return stack
      .calls('slack', method)
      .filter((call) => (call.body as { channel?: string }).channel === channel);
  }

  /** A click as Slack posts it to the interactivity URL: a signed form whose `payload` is the JSON. */
  async function click(user: string, messageTs: string, value: string) {
    const payload = {
      type: 'block_actions',
      user: { id: user, username: user.toLowerCase(), name: user.toLowerCase(), team_id: 'T1' },
      api_app_id: 'A1',
      token: 'verification-token',
      container: {
        type: 'message',
        message_ts: messageTs,
        channel_id: channel,
        is_ephemeral: false,
        thread_ts: root,
      },
      trigger_id: '1.2.3',
      team: { id: 'T1', domain: 'example' },
      channel: { id: channel, name: 'approvals' },
      message: { type: 'message', ts: messageTs, text: 'The agent asks' },
      response_url: 'https://hooks.slack.com/actions/T1/1/x',
      actions: [
        {
          action_id: 'approval_0',
          block_id: 'tributary_approval',
          value,
          type: 'button',
          action_ts: `${Date.now() / 1000}`,
        },
      ],
    };
    const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    const timestamp = String(Math.floor(Date.now() / 1000));
    return stack.post('/webhooks/slack/interactivity', body, {
      'content-type': 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': timestamp,
      'x-slack-signature': slackSignature(STACK_SECRETS.SLACK_SIGNING_SECRET, timestamp, body),
    });
  }

  it('posts Block Kit buttons; a stranger is told privately, a member of an approver group applies it once', async () => {
    const event = {
      type: 'app_mention',
      channel,
      user: 'U1',
      text: '<@UBOT> run it\n@agent {"permission": true}',
      ts: root,
    };
    await postSlackEvent(
      stack,
      JSON.stringify({ type: 'event_callback', team_id: 'T1', event_id: 'EvApprove', event }),
    );
    let asked: FakeApiCall | undefined;
    await waitFor(
      () => {
        asked = inChannel('chat.postMessage').find(
          (call) => (call.body as { blocks?: unknown }).blocks !== undefined,
        );
        return asked !== undefined;
      },
      { what: 'the permission request in the thread' },
    );
    const ts = (asked!.answer as { ts: string }).ts;
    const blocks = (
      asked!.body as { blocks: { type: string; elements?: { value: string; style: string }[] }[] }
    ).blocks;
    const buttons = blocks.find((block) => block.type === 'actions')!.elements!;
    expect(buttons.map((button) => button.style)).toEqual(['primary', 'primary', 'danger', 'danger']);

    expect((await click('U2', ts, buttons[0]!.value)).status).toBe(200);
    await waitFor(() => inChannel('chat.postEphemeral').length === 1, { what: 'the private refusal' });
    expect(inChannel('chat.postEphemeral')[0]!.body).toMatchObject({
      user: 'U2',
      thread_ts: root,
      text: 'Only the person who started this conversation or an approver can answer this request.',
    });
    expect(inChannel('chat.update').filter((call) => (call.body as { ts: string }).ts === ts)).toEqual([]);

    // U3 is in the user group APPROVERS names, so Slack's answer to usergroups.users.list lets them.
    expect((await click('U3', ts, buttons[0]!.value)).status).toBe(200);
    await waitFor(
      () =>
        [...inChannel('chat.postMessage'), ...inChannel('chat.update')].some((call) =>
          shownText(call)?.includes('permission: selected allow-once'),
        ),
      { what: 'the agent’s reply after the answer' },
    );
    const settled = inChannel('chat.update').find((call) => (call.body as { ts: string }).ts === ts)!;
    expect(shownText(settled)).toBe('✅ *allow_once*, by u3: Scripted execute tool');
    expect(stack.calls('slack', 'usergroups.users.list').map((call) => call.body)).toContainEqual({
      usergroup: 'SAPPROVERS',
    });
    expect((settled.body as { blocks: { type: string }[] }).blocks.map((block) => block.type)).toEqual([
      'section',
    ]);
  });
});

describe('permission requests put to the thread (Discord)', () => {
  const thread = '890001';

  function inThread(method: string) {
    return stack.calls('discord', method).filter((call) => call.path.startsWith(`/channels/${thread}/`));
  }

  /** A click as Discord posts it: a MESSAGE_COMPONENT interaction from `userId`. */
  function click(userId: string, messageId: string, customId: string, roles: string[] = []) {
    return postDiscordInteraction(
      stack,
      JSON.stringify({
        type: 3,
        id: `9${Date.now()}`,
        application_id: '900',
        channel_id: thread,
        guild_id: '500001',
        token: 'interaction-token',
        version: 1,
        member: { user: { id: userId, username: `user${userId}`, global_name: null }, roles },
        message: { id: messageId, channel_id: thread },
        data: { custom_id: customId, component_type: 2 },
      }),
    );
  }

  it('posts a row of buttons; a stranger is told privately, an approver by role applies it once', async () => {
    const message = JSON.stringify({
      schema: 'tributary.discord.forwarded.v1',
      message: {
        id: '790001',
        type: 0,
        channel_id: thread,
        guild_id: '500001',
        author: { id: '42', username: 'ada', global_name: 'Ada' },
        content: '<@900> run it\n@agent {"permission": true}',
        timestamp: new Date().toISOString().replace('Z', '+00:00'),
        mentions: [{ id: '900', username: 'tributary' }],
        attachments: [],
      },
      channel: { id: thread, parent_id: '600001', type: 11 },
    });
    expect((await postDiscordForwarded(stack, message)).body).toMatchObject({ outcome: 'accepted' });
    let asked: FakeApiCall | undefined;
    await waitFor(
      () => {
        asked = inThread('createMessage').find((call) => (call.body as { components?: unknown }).components);
        return asked !== undefined;
      },
      { what: 'the permission request in the thread' },
    );
    const messageId = (asked!.answer as { id: string }).id;
    const [row] = (asked!.body as { components: { components: { custom_id: string; style: number }[] }[] })
      .components;
    expect(row!.components.map((button) => button.style)).toEqual([3, 3, 4, 4]);

    // A member with another role is refused, privately; one with an APPROVERS role may answer.
    expect((await click('77', messageId, row!.components[0]!.custom_id, ['444'])).body).toEqual({
      type: 4,
      data: {
        content: 'Only the person who started this conversation or an approver can answer this request.',
        flags: 64,
      },
    });
    expect((await click('88', messageId, row!.components[0]!.custom_id, ['555'])).body).toEqual({ type: 6 });
    await waitFor(
      () =>
        [...inThread('createMessage'), ...inThread('editMessage')].some((call) =>
          shownText(call)?.includes('permission: selected allow-once'),
        ),
      { what: 'the agent’s reply after the answer' },
    );
    const settled = inThread('editMessage').find((call) => call.path.endsWith(`/${messageId}`))!;
    expect(settled.body).toEqual({
      content: '✅ **allow_once**, by user88: Scripted execute tool',
      components: [],
    });
  });
});
