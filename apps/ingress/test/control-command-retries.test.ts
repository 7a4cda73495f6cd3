import { arrivalFromBody } from '@tributary/packing';
import { GatewayClient } from '@tributary/platforms';
import { queueDefaults } from '@tributary/queue';
import { threadKeys } from '@tributary/queue/testing';
import { type FakePlatformApi, startFakePlatformApi, waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alreadyApplied } from '../src/control-commands.js';
import {
  type Answer,
  discordForward,
  discordHeaders,
  gatewayEvent,
  hmacHeaders,
  type IngressHarness,
  SECRETS,
  slackHeaders,
  startIngressHarness,
  telegramHeaders,
} from './ingress-fixture.js';

/**
 * A control command is deduplicated like a message: a platform's retry of a `/cancel-all` (Slack's
 * `x-slack-retry-num`, Telegram's repeated update, a gateway or forwarder redelivery, a replay inside
 * the signature window) answers `duplicate` and drops nothing that arrived since the first delivery.
 */

const ADMIN_TOKEN = 'admin-token-for-the-retry-tests-0123456';
let api: FakePlatformApi;
let h: IngressHarness;
beforeAll(async () => {
  api = await startFakePlatformApi({ gatewaySecret: SECRETS.GATEWAY_SECRET });
  const gateway = new GatewayClient({ replyUrl: api.urls.gatewayReply, secret: SECRETS.GATEWAY_SECRET });
  h = await startIngressHarness({
    clients: new Map([['gateway', gateway]]),
    env: { ADMIN_TOKENS: `ops:act:${ADMIN_TOKEN}` },
  });
});
afterAll(async () => {
  await h.close();
  await api.close();
});

/** One conversation on one platform, delivered as the platform delivers it. */
interface Conversation {
  thread: string;
  /** A new message in the conversation. */
  say(text: string): Promise<Answer>;
  /** One delivery of `/cancel-all`: the same one every time it is called (a retry of it). */
  cancelAll(): Promise<Answer>;
}

let next = 0;
/** Ids no other conversation of this run uses. */
const fresh = () => 100 + ++next;

function slack(): Conversation {
  const seconds = 1_710_000_000 + fresh();
  const root = `${seconds}.000100`;
  let replies = 0;
  const event = (text: string, ts: string) =>
    JSON.stringify({
      type: 'event_callback',
      team_id: 'T1',
      event_id: `Ev-${ts}`,
      event_time: 1_710_000_000,
      event: { type: 'message', channel: 'C1', user: 'U1', text, ts, thread_ts: root },
    });
  const post = (body: string, headers: Record<string, string> = {}) =>
    h.post('/webhooks/slack', body, { ...slackHeaders(body), ...headers });
  const command = event('<@UBOT> /cancel-all', `${seconds}.000999`);
  let sent = 0;
  return {
    thread: `slack:C1:${root}`,
    say: (text) => post(event(`<@UBOT> ${text}`, `${seconds}.${String(++replies).padStart(6, '0')}`)),
    // Slack marks its redeliveries; the event is the same.
    cancelAll: () => post(command, sent++ === 0 ? {} : { 'x-slack-retry-num': String(sent - 1) }),
  };
}

function telegram(): Conversation {
  const chatId = -1_000_000 - fresh();
  const update = (id: number, text: string, entities: object[]) =>
    JSON.stringify({
      update_id: id,
      message: {
        message_id: id,
        date: Math.floor(Date.now() / 1000),
        chat: { id: chatId, type: 'supergroup', title: 'dev' },
        from: { id: 42, is_bot: false, first_name: 'Ada', username: 'ada' },
        text,
        entities,
      },
    });
  const post = (body: string) => h.post('/webhooks/telegram', body, telegramHeaders());
  const command = update(9_000 + fresh(), '/cancel-all', [{ type: 'bot_command', offset: 0, length: 11 }]);
  return {
    thread: `telegram:${chatId}:main`,
    say: (text) =>
      post(update(9_000 + fresh(), `@tributary_bot ${text}`, [{ type: 'mention', offset: 0, length: 14 }])),
    cancelAll: () => post(command),
  };
}

function discordForwarded(): Conversation {
  const channel = String(5_000 + fresh());
  const post = (body: string) =>
    h.post('/webhooks/discord/forwarded', body, hmacHeaders(SECRETS.DISCORD_FORWARDER_SECRET, body));
  const command = discordForward('/cancel-all', String(fresh()), channel);
  return {
    thread: `discord:${channel}`,
    say: (text) => post(discordForward(text, String(fresh()), channel)),
    cancelAll: () => post(command),
  };
}

/** Messages forwarded from the channel, `/cancel-all` as the slash command Discord posts. */
function discordSlash(): Conversation {
  const forwarded = discordForwarded();
  const channel = forwarded.thread.slice('discord:'.length);
  const command = JSON.stringify({
    type: 2,
    id: String(fresh()),
    application_id: '900',
    channel_id: channel,
    token: 'interaction-token',
    version: 1,
    member: { user: { id: '3', username: 'ada' } },
    data: { id: '1300', name: 'cancel-all', type: 1 },
  });
  return {
    ...forwarded,
    // Signed anew each time, as a replay inside the signature window would be.
    cancelAll: () => h.post('/webhooks/discord', command, discordHeaders(h.discordKey, command)),
  };
}

function gateway(): Conversation {
  const channel = { id: 'dev', type: 'group', thread_id: `R${fresh()}` };
  const post = (body: string) => h.post('/webhooks/gateway', body, hmacHeaders(SECRETS.GATEWAY_SECRET, body));
  const message_id = `cmd-${fresh()}`;
  return {
    thread: `gateway:telegram:dev:${channel.thread_id}`,
    say: (text) => post(gatewayEvent(text, { channel })),
    // A gateway redelivers the same platform message as an event with an id of its own.
    cancelAll: () => post(gatewayEvent('/cancel-all', { channel, message_id })),
  };
}

/** What ingress did with the delivery: a slash command's answer is the interaction's response. */
function outcome(answer: Answer): unknown {
  const content = (answer.body.data as { content?: string } | undefined)?.content;
  if (content === undefined) return answer.body.outcome;
  return content === alreadyApplied('cancel-all') ? 'duplicate' : content;
}

/** The texts waiting in the thread's inbox, in order. */
async function waiting(thread: string): Promise<string[]> {
  const entries = await h.redis.xrange(threadKeys(h.prefix, queueDefaults.buckets, thread).inbox, '-', '+');
  return entries.map(([, fields]) => arrivalFromBody(fields[fields.indexOf('body') + 1]!).text);
}

describe('a retried /cancel-all', () => {
  it.each([
    ['Slack', slack, 'control'],
    ['Telegram', telegram, 'control'],
    ['Discord (forwarded message)', discordForwarded, 'control'],
    ['Discord (slash command)', discordSlash, 'Cancelled the running turn and dropped 1 waiting message.'],
    ['the gateway', gateway, 'control'],
  ])('on %s keeps the message that arrived in between', async (_platform, open, applied) => {
    const c = open();
    expect((await c.say('first')).body.outcome).toBe('accepted');
    expect(outcome(await c.cancelAll())).toBe(applied);
    expect((await c.say('second')).body.outcome).toBe('accepted');

    const retry = await c.cancelAll();
    expect(await waiting(c.thread)).toEqual(['second']);
    expect(retry.status).toBe(200);
    expect(outcome(retry)).toBe('duplicate');
  });

  it('applies once when its deliveries race', async () => {
    const c = telegram();
    await c.say('first');
    const outcomes = await Promise.all([c.cancelAll(), c.cancelAll(), c.cancelAll(), c.cancelAll()]);
    expect(outcomes.map(outcome).sort()).toEqual(['control', 'duplicate', 'duplicate', 'duplicate']);
  });

  it('posts its confirmation once', async () => {
    const c = gateway();
    const threadId = c.thread.split(':').at(-1);
    type Reply = { channel: { thread_id?: string }; content: { text: string } };
    const confirmations = () =>
      api
        .calls()
        .filter((call) => call.platform === 'gateway' && call.method === 'reply')
        .map((call) => call.body as Reply)
        .filter((reply) => reply.channel.thread_id === threadId)
        .map((reply) => reply.content.text);
    await c.cancelAll();
    expect(outcome(await c.cancelAll())).toBe('duplicate');
    // A confirmation of a later command: the retry's, had there been one, was sent before it.
    await c.say('/cancel');
    await waitFor(() => confirmations().some((text) => text.startsWith('No turn is running')), {
      what: 'the confirmation of the later /cancel',
    });
    expect(confirmations()).toEqual([
      'Cancelled the running turn and dropped 0 waiting messages.',
      'No turn is running; messages waiting are kept.',
    ]);
  });
});

describe("the admin API's cancel-all sent again with the same Idempotency-Key", () => {
  it('keeps the message that arrived in between, even when the first answer was not kept', async () => {
    const c = gateway();
    await c.say('first');
    const act = () =>
      fetch(`${h.adminUrl}/admin/threads/${encodeURIComponent(c.thread)}/cancel-all`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'idempotency-key': `cancel-all-${c.thread}` },
      });
    const first = await act();
    expect(await first.json()).toMatchObject({ result: 'cancelled; dropped 1 waiting message' });
    await c.say('second');

    const replayed = await act();
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(await waiting(c.thread)).toEqual(['second']);

    // An ingress that died between acting and keeping its answer left a claim that lapses: the key is
    // then new to the audit log, and only the thread still knows it.
    const [, kept] = await h.redis.scan('0', 'MATCH', `${h.prefix}:{audit}:idem:*`, 'COUNT', 1000);
    expect(kept).toHaveLength(1);
    await h.redis.del(kept[0]!);
    const again = await act();
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ result: 'applied before with this Idempotency-Key' });
    expect(await waiting(c.thread)).toEqual(['second']);
  });
});

describe('a /cancel-all refused while Redis is down', () => {
  let down: IngressHarness;
  beforeAll(async () => {
    down = await startIngressHarness({ privateRedis: true });
  });
  afterAll(() => down.close());

  it('is applied when the platform retries it', async () => {
    const update = (id: number, text: string) =>
      JSON.stringify({
        update_id: id,
        message: {
          message_id: id,
          date: Math.floor(Date.now() / 1000),
          chat: { id: 555, type: 'private', first_name: 'Ada' },
          from: { id: 42, is_bot: false, first_name: 'Ada', username: 'ada' },
          text,
        },
      });
    const post = (body: string) => down.post('/webhooks/telegram', body, telegramHeaders());
    expect((await post(update(1, 'first'))).body.outcome).toBe('accepted');
    const command = update(2, '/cancel-all');
    await down.server.kill('SIGKILL');
    expect((await post(command)).status).toBe(503);
    await down.server.restart();
    let retried: Answer | undefined;
    await waitFor(
      async () => {
        retried = await post(command);
        return retried.status !== 503;
      },
      { what: 'ingress to answer again', timeoutMs: 5_000, intervalMs: 100 },
    );
    expect(retried!.body).toMatchObject({
      outcome: 'control',
      confirmation: 'Cancelled the running turn and dropped 1 waiting message.',
    });
  });
});
