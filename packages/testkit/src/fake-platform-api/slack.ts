import type { FakeAnswer, FakePlatformHandler, FakeRequest } from './handler.js';
import type { MessageStore, StoredMessage } from './message-store.js';
import type { FakeDirectory, FakeFailure, FakeSlackTeam, SeededUser } from './types.js';

/** Slack's hard limit; longer texts are refused with `msg_too_long`. */
const MAX_TEXT = 40_000;
/** `markdown_text` of one streaming call. */
const MAX_STREAM_TEXT = 12_000;

/**
 * Slack Web API at `/slack/api/<method>`: HTTP 200 with `ok: false` for errors, Bearer token auth. The
 * first of `teams` is the default workspace and owns every channel no other one lists.
 */
export function slackHandler(
  teams: readonly [Omit<FakeSlackTeam, 'channels'>, ...FakeSlackTeam[]],
  store: MessageStore,
  directory: Pick<FakeDirectory, 'slackUsers' | 'slackUserGroups'>,
  channelPostsPerMinute?: number,
  nativeStreaming = false,
): FakePlatformHandler {
  const limit = channelPostsPerMinute === undefined ? undefined : new ChannelLimit(channelPostsPerMinute);
  const fail = (error: string, headers?: Record<string, string>): FakeAnswer => ({
    status: 200,
    headers,
    body: { ok: false, error },
  });

  const [home, ...others] = teams;
  const teamOf = (request: FakeRequest) =>
    teams.find((team) => request.headers.authorization === `Bearer ${team.token}`);
  const ownerOf = (channel: string) => others.find((team) => team.channels.includes(channel)) ?? home;

  const methods: Record<
    string,
    (args: Record<string, unknown>, bot: FakeSlackTeam['bot'], team: string) => FakeAnswer
  > = {
    'chat.postMessage': (args, bot) => {
      const channel = stringArg(args.channel);
      const text = stringArg(args.text);
      if (!channel) return fail('channel_not_found');
      const wait = limit?.take(channel);
      if (wait !== undefined) return ratelimited(wait);
      if (!text?.trim()) return fail('no_text');
      if (text.length > MAX_TEXT) return fail('msg_too_long');
      if (!validBlocks(args.blocks)) return fail('invalid_blocks');
      const n = store.nextNumber();
      const message = store.put({
        channelId: channel,
        id: `${Math.floor(Date.now() / 1000)}.${String(n).padStart(6, '0')}`,
        threadId: stringArg(args.thread_ts),
        senderId: bot.userId,
        senderName: 'fake-bot',
        text,
        timestamp: new Date().toISOString(),
        ...(Array.isArray(args.blocks) ? { blocks: args.blocks } : {}),
      });
      return {
        status: 200,
        body: { ok: true, channel, ts: message.id, message: slackMessage(message, bot.userId) },
      };
    },
    'chat.update': (args) => {
      const channel = stringArg(args.channel) ?? '';
      const message = store.get(channel, stringArg(args.ts) ?? '');
      const text = stringArg(args.text);
      if (!message) return fail('message_not_found');
      if (message.streaming === 'in_progress') return fail('cant_update_message');
      const wait = limit?.take(channel);
      if (wait !== undefined) return ratelimited(wait);
      if (!text?.trim()) return fail('no_text');
      if (args.blocks !== undefined && !validBlocks(args.blocks)) return fail('invalid_blocks');
      message.text = text;
      // As Slack does: blocks stay unless the update gives others; an empty list removes them.
      if (Array.isArray(args.blocks)) message.blocks = args.blocks.length > 0 ? args.blocks : undefined;
      return { status: 200, body: { ok: true, channel, ts: message.id, text } };
    },
    // Slack's streaming methods, for a workspace that has them (`slackNativeStreaming`); without them
    // the answer is `unknown_method`, as Slack gives for a method a workspace cannot call.
    'chat.startStream': (args, bot) => {
      if (!nativeStreaming) return fail('unknown_method');
      const channel = stringArg(args.channel);
      if (!channel) return fail('channel_not_found');
      const markdown = stringArg(args.markdown_text) ?? '';
      const direct = channel.startsWith('D');
      if (!direct && (!stringArg(args.recipient_user_id) || !stringArg(args.recipient_team_id))) {
        return fail('invalid_arguments');
      }
      if (markdown.length > MAX_STREAM_TEXT) return fail('msg_too_long');
      const wait = limit?.take(channel);
      if (wait !== undefined) return ratelimited(wait);
      const message = store.put({
        channelId: channel,
        id: `${Math.floor(Date.now() / 1000)}.${String(store.nextNumber()).padStart(6, '0')}`,
        threadId: stringArg(args.thread_ts),
        senderId: bot.userId,
        senderName: 'fake-bot',
        text: markdown,
        blocks: [{ type: 'markdown', text: markdown }],
        streaming: 'in_progress',
        timestamp: new Date().toISOString(),
      });
      return { status: 200, body: { ok: true, channel, ts: message.id } };
    },
    'chat.appendStream': (args) => {
      if (!nativeStreaming) return fail('unknown_method');
      const message = store.get(stringArg(args.channel) ?? '', stringArg(args.ts) ?? '');
      const markdown = stringArg(args.markdown_text);
      if (!message) return fail('message_not_found');
      if (message.streaming !== 'in_progress') return fail('message_not_in_streaming_state');
      if (!markdown) return fail('invalid_arguments');
      if (markdown.length > MAX_STREAM_TEXT) return fail('msg_too_long');
      const wait = limit?.take(message.channelId);
      if (wait !== undefined) return ratelimited(wait);
      message.text += markdown;
      message.blocks = [{ type: 'markdown', text: message.text }];
      return { status: 200, body: { ok: true, channel: message.channelId, ts: message.id } };
    },
    'chat.stopStream': (args) => {
      if (!nativeStreaming) return fail('unknown_method');
      const message = store.get(stringArg(args.channel) ?? '', stringArg(args.ts) ?? '');
      if (!message) return fail('message_not_found');
      if (message.streaming !== 'in_progress') return fail('message_not_in_streaming_state');
      message.text += stringArg(args.markdown_text) ?? '';
      message.blocks = [{ type: 'markdown', text: message.text }];
      message.streaming = 'completed';
      return { status: 200, body: { ok: true, channel: message.channelId, ts: message.id } };
    },
    'chat.postEphemeral': (args) => {
      const channel = stringArg(args.channel);
      if (!channel) return fail('channel_not_found');
      if (!stringArg(args.user)) return fail('user_not_in_channel');
      if (!stringArg(args.text)?.trim()) return fail('no_text');
      return { status: 200, body: { ok: true, message_ts: `${Math.floor(Date.now() / 1000)}.000001` } };
    },
    'reactions.add': (args) => reaction(args, true),
    'reactions.remove': (args) => reaction(args, false),
    'conversations.replies': (args, bot) => {
      const channel = stringArg(args.channel) ?? '';
      const ts = stringArg(args.ts) ?? '';
      const root = store.get(channel, ts);
      if (!root) return fail('thread_not_found');
      const limit = Number(args.limit ?? 1000);
      const messages = [root, ...store.replies(channel, ts)].slice(0, Math.max(1, limit));
      const shown = messages.map((message) => slackMessage(message, bot.userId));
      return { status: 200, body: { ok: true, messages: shown, has_more: false } };
    },
    'auth.test': (_args, bot, team) => ({
      status: 200,
      body: {
        ok: true,
        url: 'https://fake.slack.com/',
        team: 'Fake',
        team_id: team,
        user: bot.name,
        user_id: bot.userId,
      },
    }),
    'users.info': (args) => {
      const user = directory.slackUsers.get(stringArg(args.user) ?? '');
      if (!user) return fail('user_not_found');
      return { status: 200, body: { ok: true, user: slackUser(user) } };
    },
    'usergroups.users.list': (args) => {
      const users = directory.slackUserGroups.get(stringArg(args.usergroup) ?? '');
      if (!users) return fail('no_such_subteam');
      return { status: 200, body: { ok: true, users } };
    },
  };

  // The bot's reactions, so that repeats answer `already_reacted` / `no_reaction` as Slack does.
  const reactions = new Set<string>();
  function reaction(args: Record<string, unknown>, add: boolean): FakeAnswer {
    const channel = stringArg(args.channel);
    const ts = stringArg(args.timestamp);
    const name = stringArg(args.name);
    if (!channel || !ts) return fail('message_not_found');
    if (!name) return fail('invalid_name');
    const key = `${channel}:${ts}:${name}`;
    if (add && reactions.has(key)) return fail('already_reacted');
    if (!add && !reactions.has(key)) return fail('no_reaction');
    if (add) reactions.add(key);
    else reactions.delete(key);
    return { status: 200, body: { ok: true } };
  }

  return {
    platform: 'slack',
    method: (request) => request.path.slice(1),
    recordedPath: (request) => request.path,
    authorized: (request) => teamOf(request) !== undefined,
    account: (request) => teamOf(request)?.id,
    unauthorized: () => fail('invalid_auth'),
    failure: (failure) => slackFailure(failure),
    handle: (request: FakeRequest, method) => {
      const team = teamOf(request)!;
      const args = request.payload ?? {};
      // A workspace's token sees only its own channels.
      const channel = stringArg(args.channel);
      if (channel !== undefined && ownerOf(channel).id !== team.id) return fail('channel_not_found');
      return methods[method]?.(args, team.bot, team.id) ?? fail('unknown_method');
    },
  };
}

/** Slack's answer to a write past the limit: HTTP 429 with the seconds to wait. */
function ratelimited(waitMs: number): FakeAnswer {
  const headers = { 'retry-after': String(Math.max(1, Math.ceil(waitMs / 1000))) };
  return { status: 429, headers, body: { ok: false, error: 'ratelimited' } };
}

/** At most `perMinute` writes a minute per channel after a burst of four (a cell rate, per channel). */
class ChannelLimit {
  private readonly next = new Map<string, number>();
  private readonly intervalMs: number;

  constructor(perMinute: number) {
    this.intervalMs = 60_000 / perMinute;
  }

  /** Undefined when the write may go (and is counted); otherwise how long until it could. */
  take(channel: string): number | undefined {
    const now = Date.now();
    const tat = Math.max(this.next.get(channel) ?? now, now);
    const at = tat - this.intervalMs * 3;
    if (at > now) return at - now;
    this.next.set(channel, tat + this.intervalMs);
    return undefined;
  }
}

/** Slack's documented bounds on the blocks we send: a section's text, a button's label and value. */
function validBlocks(blocks: unknown): boolean {
  if (blocks === undefined) return true;
  if (!Array.isArray(blocks) || blocks.length > 50) return false;
  return (blocks as { type?: string; text?: { text?: string }; elements?: unknown[] }[]).every((block) => {
    if (block.type === 'section') return (block.text?.text?.length ?? 0) <= 3000;
    if (block.type !== 'actions') return false;
    const elements = (block.elements ?? []) as {
      text?: { text?: string };
      value?: string;
      action_id?: string;
    }[];
    return (
      elements.length <= 25 &&
      elements.every(
        (button) =>
          (button.text?.text?.length ?? 0) <= 75 &&
          (button.value?.length ?? 0) <= 2000 &&
          Boolean(button.action_id),
      )
    );
  });
}

function slackFailure({ status, retryAfterSeconds, error }: FakeFailure): FakeAnswer {
  const headers =
    retryAfterSeconds === undefined ? undefined : { 'retry-after': String(Math.ceil(retryAfterSeconds)) };
  const fallback = status === 429 ? 'ratelimited' : status === 200 ? 'internal_error' : 'fatal_error';
  return { status, headers, body: { ok: false, error: error ?? fallback } };
}

function slackMessage(message: StoredMessage, botUser: string) {
  return {
    type: 'message',
    ts: message.id,
    user: message.senderId,
    ...(message.senderId === botUser ? { bot_id: 'BFAKEBOT', username: message.senderName } : {}),
    text: message.text,
    ...(message.threadId === undefined ? {} : { thread_ts: message.threadId }),
  };
}

/** users.info's user object; Slack leaves unset profile names as ''. */
function slackUser(user: SeededUser) {
  return {
    id: user.id,
    name: user.name,
    real_name: user.realName ?? '',
    is_bot: false,
    profile: { real_name: user.realName ?? '', display_name: user.displayName ?? '' },
  };
}

function stringArg(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
