import type { StoredMessage } from './message-store.js';

export type FakePlatform = 'slack' | 'telegram' | 'discord' | 'gateway';

/** One request the fake answered, as it arrived; credentials are redacted. */
export interface FakeApiCall {
  /** 1, 2, 3, … in arrival order. */
  seq: number;
  platform: FakePlatform;
  /** The API method: `chat.postMessage`, `sendMessage`, `createMessage`, `reply`, … */
  method: string;
  path: string;
  headers: Record<string, string>;
  /** The parsed payload: the JSON body, the form fields, or the query of a GET; undefined when none. */
  body: unknown;
  /** Whose credentials the call was made with, where a platform tells accounts apart (a Slack team id). */
  account?: string;
  /** The status the fake answered. */
  status: number;
  /** The body the fake answered with (a posted message's id is here). */
  answer?: unknown;
  /** Arrival time, ms since the epoch (monotonic within the fake's process). */
  at: number;
}

/** The next matching request(s) fail, in the platform's own way (a 429 carries its wait as the platform does). */
export interface FakeFailure {
  platform: FakePlatform;
  /** Any method when omitted. */
  method?: string;
  status: number;
  retryAfterSeconds?: number;
  /** How many requests fail; 1 when omitted. */
  times?: number;
  /** The platform's error text: Slack's `error` (a 200 answer becomes `ok: false`), Telegram's `description`, Discord's `message`. */
  error?: string;
}

/** A message that exists on the platform before the test, e.g. the message a thread started from. */
export interface SeededMessage {
  platform: 'slack' | 'discord';
  channelId: string;
  /** Slack: the `ts`; Discord: the message id (for a thread's starter, the thread's id). */
  messageId: string;
  senderId: string;
  senderName?: string;
  text: string;
  /** ISO-8601; now when omitted. */
  timestamp?: string;
}

/** A file the fake serves, as a platform would host it. */
export interface SeededFile {
  name: string;
  bytes: Buffer;
  /** What the file host declares; the broker is expected to sniff the bytes rather than trust it. */
  contentType: string;
}

/** Where a seeded file is found on each platform. */
export interface FakeFile {
  size: number;
  /** A Slack `url_private` (needs the bot token). */
  slackUrl: string;
  /** A Telegram `file_id`, resolved by getFile. */
  telegramFileId: string;
  /** A Discord CDN URL. */
  discordUrl: string;
  /** A gateway file server URL. */
  gatewayUrl: string;
}

/** A Slack user, as users.info describes them. */
export interface SeededUser {
  id: string;
  name: string;
  realName?: string;
  displayName?: string;
}

/** Who is who on the fake platforms: Slack's users and user groups, Telegram's chat members. */
export interface FakeDirectory {
  slackUsers: Map<string, SeededUser>;
  /** A user group's id → its members' ids, as usergroups.users.list answers. */
  slackUserGroups: Map<string, readonly string[]>;
  /** `<chat id>:<user id>` → the member's status, as getChatMember answers; `member` when unset. */
  telegramMembers: Map<string, TelegramMemberStatus>;
}

export type TelegramMemberStatus = 'creator' | 'administrator' | 'member' | 'restricted' | 'left' | 'kicked';

/** Who the bot tokens belong to, as auth.test, getMe and /users/@me answer. */
export interface FakeBots {
  slack: { userId: string; name: string };
  telegram: { username: string };
  discord: { id: string; username: string };
}

export interface FakePlatformApiOptions {
  /** The credentials the fake accepts; defaults are in `FakePlatformApi.tokens`. */
  tokens?: Partial<FakeTokens>;
  /** When set, gateway replies must be signed with it over a fresh `x-tributary-timestamp` (else 401). */
  gatewaySecret?: string;
  bots?: Partial<FakeBots>;
  /**
   * Enforces Slack's per-channel posting limit on chat.postMessage and chat.update: this many a minute,
   * with a short burst of four, a write beyond it answered 429 `ratelimited` with Retry-After. Unset:
   * not enforced.
   */
  slackChannelPostsPerMinute?: number;
  /** A workspace with Slack's streaming methods (chat.startStream and its kin); without: `unknown_method`. */
  slackNativeStreaming?: boolean;
  /**
   * Further Slack workspaces, each with its own bot token, bot user and channels. The default workspace
   * (`FAKE_SLACK_TEAM`, `tokens.slack`) owns every other channel; a call on a channel of another
   * workspace than its token's answers `channel_not_found`, as Slack does.
   */
  slackTeams?: readonly FakeSlackTeam[];
}

/** The default Slack workspace's id. */
export const FAKE_SLACK_TEAM = 'TFAKE';

/** A Slack workspace the fake serves besides the default one. */
export interface FakeSlackTeam {
  id: string;
  token: string;
  bot: FakeBots['slack'];
  /** The channels that are this workspace's. */
  channels: readonly string[];
}

export interface FakeTokens {
  slack: string;
  telegram: string;
  discord: string;
}

export interface WaitForCallsOptions {
  timeoutMs?: number;
  /** Resolve once this many calls match; 1 when omitted. */
  count?: number;
}

export interface FakePlatformApi {
  /** Exactly what SLACK_API_URL, TELEGRAM_API_URL, DISCORD_API_URL and GATEWAY_REPLY_URL are set to. */
  readonly urls: { slack: string; telegram: string; discord: string; gatewayReply: string };
  readonly tokens: FakeTokens;
  /** `http://127.0.0.1:<port>`; `GET <origin>/_calls?since=<seq>&waitMs=<ms>` long-polls the call log. */
  readonly origin: string;
  calls(): FakeApiCall[];
  /** The matching calls once at least `count` of them arrived; rejects after `timeoutMs`. */
  waitForCalls(
    predicate: (call: FakeApiCall) => boolean,
    options?: WaitForCallsOptions,
  ): Promise<FakeApiCall[]>;
  failNext(failure: FakeFailure): void;
  seedMessage(message: SeededMessage): void;
  /** Serves real bytes from every platform's file host (downloads are recorded as method `file`). */
  seedFile(file: SeededFile): FakeFile;
  /** A Slack or Discord message as the platform holds it now (its text, blocks and streaming state). */
  message(platform: 'slack' | 'discord', channelId: string, messageId: string): StoredMessage | undefined;
  seedSlackUser(user: SeededUser): void;
  seedSlackUserGroup(groupId: string, userIds: readonly string[]): void;
  seedTelegramMember(chatId: number | string, userId: number | string, status: TelegramMemberStatus): void;
  readonly bots: FakeBots;
  close(): Promise<void>;
}
