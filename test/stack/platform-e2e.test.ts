import { signedRequestHeaders } from '@tributary/platforms';
import type { FakeApiCall } from '@tributary/testkit';
import { waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  postDiscordForwarded,
  postSlackEvent,
  postTelegramMessage,
  STACK_SECRETS,
  type Stack,
  startStack,
} from './stack-fixture.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

/** How one platform delivers a message in one thread and what its answers look like on its API. */
interface PlatformDriver {
  name: string;
  /** The queue's key of the conversation. */
  thread: string;
  limit: number;
  deliver(text: string): Promise<string>;
  /** Messages the stack posted into the thread, in order. */
  posts(): FakeApiCall[];
  postText(call: FakeApiCall): string;
  /** Message ids that got 👀, in order. */
  accepted(): string[];
}

let seq = 0;
const next = () => ++seq;

function slackDriver(): PlatformDriver {
  const root = `17000${String(next()).padStart(5, '0')}.000100`;
  const channel = `C${next()}`;
  let first = true;
  return {
    name: 'slack',
    thread: `slack:${channel}:${root}`,
    limit: 4000,
    async deliver(text) {
      const ts = first ? root : `17000${String(next()).padStart(5, '0')}.000200`;
      const event = { type: 'message', channel, user: 'U1', text, ts, ...(first ? {} : { thread_ts: root }) };
      first = false;
      const body = JSON.stringify({ type: 'event_callback', team_id: 'T1', event_id: `Ev${next()}`, event });
      const answer = await postSlackEvent(stack, body);
      expect(answer.body).toMatchObject({ outcome: 'accepted' });
      return ts;
    },
    posts: () =>
      stack
        .calls('slack', 'chat.postMessage')
        .filter((c) => (c.body as { channel: string; thread_ts?: string }).channel === channel)
        .map((c) => {
          // Every answer goes into the thread the first message started.
          expect((c.body as { thread_ts?: string }).thread_ts).toBe(root);
          return c;
        }),
    postText: (c) => (c.body as { text: string }).text,
    accepted: () =>
      stack
        .calls('slack', 'reactions.add')
        .map((c) => c.body as { channel: string; timestamp: string; name: string })
        .filter((b) => b.channel === channel && b.name === 'eyes')
        .map((b) => b.timestamp),
  };
}

function telegramDriver(): PlatformDriver {
  const chat = -1000 - next();
  return {
    name: 'telegram',
    thread: `telegram:${chat}:main`,
    limit: 4096,
    async deliver(text) {
      const id = 10_000 + next();
      const answer = await postTelegramMessage(stack, chat, id, text);
      expect(answer.body).toMatchObject({ outcome: 'accepted' });
      return String(id);
    },
    posts: () =>
      stack.calls('telegram', 'sendMessage').filter((c) => (c.body as { chat_id: number }).chat_id === chat),
    postText: (c) => (c.body as { text: string }).text,
    accepted: () =>
      stack
        .calls('telegram', 'setMessageReaction')
        .map((c) => c.body as { chat_id: number; message_id: number; reaction: { emoji: string }[] })
        .filter((b) => b.chat_id === chat && b.reaction[0]?.emoji === '👀')
        .map((b) => String(b.message_id)),
  };
}

function discordDriver(): PlatformDriver {
  const thread = String(800_000 + next());
  return {
    name: 'discord',
    thread: `discord:${thread}`,
    limit: 2000,
    async deliver(text) {
      const id = String(700_000 + next());
      const body = JSON.stringify({
        schema: 'tributary.discord.forwarded.v1',
        message: {
          id,
          type: 0,
          channel_id: thread,
          guild_id: '500001',
          author: { id: '42', username: 'ada', global_name: 'Ada' },
          content: text,
          timestamp: new Date().toISOString().replace('Z', '+00:00'),
          mentions: text.includes('<@900>') ? [{ id: '900', username: 'tributary' }] : [],
          attachments: [],
        },
        channel: { id: thread, parent_id: '600001', type: 11 },
      });
      const answer = await postDiscordForwarded(stack, body);
      expect(answer.body).toMatchObject({ outcome: 'accepted' });
      return id;
    },
    posts: () =>
      stack.calls('discord', 'createMessage').filter((c) => c.path === `/channels/${thread}/messages`),
    postText: (c) => (c.body as { content: string }).content,
    accepted: () =>
      stack
        .calls('discord', 'addReaction')
        .filter(
          (c) =>
            c.path.startsWith(`/channels/${thread}/messages/`) && decodeURIComponent(c.path).includes('👀'),
        )
        .map((c) => c.path.split('/')[4]!),
  };
}

function gatewayDriver(): PlatformDriver {
  const thread = `t${next()}`;
  // event_id → message_id of each delivery: a reply names the first and quotes the second.
  const delivered = new Map<string, string>();
  return {
    name: 'gateway',
    thread: `gateway:telegram:dev:${thread}`,
    limit: 65_536,
    async deliver(text) {
      const eventId = `evt_${next()}`;
      const messageId = `m-${next()}`;
      const body = JSON.stringify({
        schema: 'openab.gateway.event.v1',
        event_id: eventId,
        timestamp: new Date().toISOString(),
        platform: 'telegram',
        event_type: 'message',
        channel: { id: 'dev', type: 'group', thread_id: thread },
        sender: { id: 'u1', name: 'ada', display_name: 'Ada', is_bot: false },
        content: { type: 'text', text },
        mentions: [],
        message_id: messageId,
      });
      const answer = await stack.post(
        '/webhooks/gateway',
        body,
        signedRequestHeaders(STACK_SECRETS.GATEWAY_SECRET, body),
      );
      expect(answer.body).toMatchObject({ outcome: 'accepted' });
      delivered.set(eventId, messageId);
      return messageId;
    },
    posts: () =>
      stack
        .calls('gateway', 'reply')
        .filter((c) => (c.body as GatewayReply).channel.thread_id === thread)
        .map((c) => {
          const reply = c.body as GatewayReply;
          expect(reply).toMatchObject({ platform: 'telegram', channel: { id: 'dev' } });
          expect(reply.quote_message_id).toBe(delivered.get(reply.reply_to));
          return c;
        }),
    postText: (c) => (c.body as GatewayReply).content.text,
    // Reactions travel as openab's add_reaction command, naming the upstream message id.
    accepted: () =>
      stack
        .calls('gateway', 'add_reaction')
        .map((c) => c.body as GatewayReply)
        .filter((r) => r.channel.thread_id === thread && r.content.text === '👀')
        .map((r) => r.reply_to),
  };
}

/** The fields of an `openab.gateway.reply.v1` the driver reads. */
interface GatewayReply {
  reply_to: string;
  platform: string;
  channel: { id: string; thread_id?: string };
  content: { text: string };
  quote_message_id?: string;
}

const mention: Record<string, string> = {
  slack: '<@UBOT> ',
  telegram: '@tributary_bot ',
  discord: '<@900> ',
  gateway: '',
};

describe.each([
  ['slack', slackDriver],
  ['telegram', telegramDriver],
  ['discord', discordDriver],
  ['gateway', gatewayDriver],
] as const)('%s end to end', (_, makeDriver) => {
  it('answers in the thread, batches a burst into one reply, reacts in order and splits long replies', async () => {
    const driver = makeDriver();
    const at = mention[driver.name]!;
    const first = await driver.deliver(`${at}check the build\n@agent {"delayMs": 1500}`);
    await waitFor(async () => (await stack.worker.queue.admin.state(driver.thread)).status === 'running', {
      what: `${driver.name}: the first turn to start`,
    });
    // Sent while the first turn runs: they must come back as ONE batched turn.
    const burst = [
      await driver.deliver('actually wait'),
      await driver.deliver('check the build and run e2e'),
      await driver.deliver('and lint'),
    ];
    await waitFor(() => driver.posts().length >= 2, {
      what: `${driver.name}: two replies`,
      timeoutMs: 30_000,
    });
    const [one, batched] = driver.posts().map(driver.postText);
    expect(one).toContain('Received 1 message in this turn');
    expect(batched).toContain('Received 3 messages in this turn');
    expect(batched).toMatch(/1\. .*actually wait[\s\S]*2\. .*run e2e[\s\S]*3\. .*and lint/);
    await waitFor(() => driver.accepted().length >= 4, { what: `${driver.name}: 👀 on every message` });
    expect(driver.accepted()).toEqual([first, ...burst]);

    const long = 'word '.repeat(Math.ceil((driver.limit * 1.5) / 5)).trim();
    await driver.deliver(`@agent {"reply": "${long}"}`);
    const expectedParts = driver.limit >= long.length ? 1 : 2;
    await waitFor(() => driver.posts().length >= 2 + expectedParts, { what: `${driver.name}: long reply` });
    const parts = driver.posts().slice(2).map(driver.postText);
    expect(parts).toHaveLength(expectedParts);
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(driver.limit);
    expect(parts.join(' ').replace(/\s+/g, ' ')).toBe(long);
  });
});
