import { DISCORD_API_URL, SLACK_API_URL, TELEGRAM_API_URL } from '@tributary/platforms/defaults';
import { ConfigError } from './config-error.js';
import { type Env, readChoice, readInteger, readOptional, readUrl } from './env-readers.js';
import { readTeamTokens } from './team-tokens.js';

export interface SlackConfig {
  /** Verifies deliveries; without it `/webhooks/slack` is off. */
  signingSecret: string | undefined;
  /**
   * Replies, reactions and thread parents in the deployment's own team (every team without a token in
   * `teamTokens`); without either, Slack threads are answered nowhere but the log.
   */
  botToken: string | undefined;
  /** SLACK_TEAM_TOKENS_DIR: each further team's bot token, by team id (docs/adr/0061). */
  teamTokens: ReadonlyMap<string, string> | undefined;
  apiUrl: string;
  /** The file host attachments are downloaded from; undefined: Slack's own. */
  filesUrl: string | undefined;
  /**
   * Our bot's user id (`U…`): its mentions are stripped, its own messages ignored. Discovered with
   * auth.test at start-up when unset.
   */
  botUserId: string | undefined;
  /**
   * SLACK_REPLY_MENTIONS: `escape` (unset) writes an agent's `<!channel>`, `<@U…>` and the like as
   * text; `allow` lets them mention.
   */
  replyMentions: 'escape' | 'allow' | undefined;
  /** SLACK_CHANNEL_POSTS_PER_MINUTE: the fleet's posts and edits per channel; undefined: Slack's 60. */
  channelPostsPerMinute: number | undefined;
  /**
   * SLACK_REPLY_STREAMING: `native` (unset) streams replies with Slack's chat.startStream where the
   * workspace allows it and edits where it does not; `edits` always edits.
   */
  replyStreaming: 'native' | 'edits' | undefined;
}

export interface TelegramConfig {
  secretToken: string | undefined;
  botToken: string | undefined;
  apiUrl: string;
  /** Without the `@`. */
  botUsername: string | undefined;
}

export interface DiscordConfig {
  /** Interactions endpoint; without it `/webhooks/discord` is off. */
  publicKey: string | undefined;
  /** Forwarded Gateway messages; without it `/webhooks/discord/forwarded` is off. */
  forwarderSecret: string | undefined;
  botToken: string | undefined;
  apiUrl: string;
  /** The CDN attachments are downloaded from; undefined: Discord's own. */
  cdnUrl: string | undefined;
  botUserId: string | undefined;
}

export interface GatewayConfig {
  /** Verifies gateway events; without it `/webhooks/gateway` is off. Also signs replies. */
  secret: string | undefined;
  replyUrl: string | undefined;
  /** The one origin attachment URLs are downloaded from; undefined: none are. */
  filesUrl: string | undefined;
}

/**
 * Per platform: undefined when none of its variables is set. Ingress turns a route on by its
 * verification secret; workers answer a platform that has its bot token (or reply URL).
 */
export interface PlatformConfig {
  slack: SlackConfig | undefined;
  telegram: TelegramConfig | undefined;
  discord: DiscordConfig | undefined;
  gateway: GatewayConfig | undefined;
}

const HTTP = ['http:', 'https:'];

/** Undefined when every field but `ignore` (an API base with a default) is unset. */
function section<T extends object>(fields: T, ignore: keyof T | undefined): T | undefined {
  return Object.entries(fields).some(([key, value]) => key !== ignore && value !== undefined)
    ? fields
    : undefined;
}

/** Platform credentials and API bases, shared by ingress (verify, react) and workers (reply). */
export function loadPlatformConfig(env: Env): Readonly<PlatformConfig> {
  const telegramSecret = readOptional(env, 'TELEGRAM_SECRET_TOKEN');
  if (telegramSecret !== undefined && !/^[A-Za-z0-9_-]{1,256}$/.test(telegramSecret)) {
    // Telegram itself only accepts these characters, so any other value can never match a delivery.
    throw new ConfigError('TELEGRAM_SECRET_TOKEN', 'must be 1-256 characters of A-Z, a-z, 0-9, _ and -');
  }
  const discordKey = readOptional(env, 'DISCORD_PUBLIC_KEY');
  if (discordKey !== undefined && !/^[0-9a-fA-F]{64}$/.test(discordKey)) {
    throw new ConfigError('DISCORD_PUBLIC_KEY', 'must be the application public key: 64 hex digits');
  }
  return Object.freeze({
    slack: section(
      {
        signingSecret: readOptional(env, 'SLACK_SIGNING_SECRET'),
        botToken: readOptional(env, 'SLACK_BOT_TOKEN'),
        teamTokens: readTeamTokens(env),
        apiUrl: readUrl(env, 'SLACK_API_URL', HTTP) ?? SLACK_API_URL,
        filesUrl: readUrl(env, 'SLACK_FILES_URL', HTTP),
        botUserId: readOptional(env, 'SLACK_BOT_USER_ID'),
        replyMentions: readMentions(env),
        replyStreaming:
          readOptional(env, 'SLACK_REPLY_STREAMING') === undefined
            ? undefined
            : readChoice(env, 'SLACK_REPLY_STREAMING', ['native', 'edits'] as const, 'native'),
        channelPostsPerMinute:
          readOptional(env, 'SLACK_CHANNEL_POSTS_PER_MINUTE') === undefined
            ? undefined
            : readInteger(env, 'SLACK_CHANNEL_POSTS_PER_MINUTE', 60, 1),
      },
      'apiUrl',
    ),
    telegram: section(
      {
        secretToken: telegramSecret,
        botToken: readOptional(env, 'TELEGRAM_BOT_TOKEN'),
        apiUrl: readUrl(env, 'TELEGRAM_API_URL', HTTP) ?? TELEGRAM_API_URL,
        botUsername: readOptional(env, 'TELEGRAM_BOT_USERNAME')?.replace(/^@/, ''),
      },
      'apiUrl',
    ),
    discord: section(
      {
        publicKey: discordKey?.toLowerCase(),
        forwarderSecret: readOptional(env, 'DISCORD_FORWARDER_SECRET'),
        botToken: readOptional(env, 'DISCORD_BOT_TOKEN'),
        apiUrl: readUrl(env, 'DISCORD_API_URL', HTTP) ?? DISCORD_API_URL,
        cdnUrl: readUrl(env, 'DISCORD_CDN_URL', HTTP),
        botUserId: readOptional(env, 'DISCORD_BOT_USER_ID'),
      },
      'apiUrl',
    ),
    gateway: section(
      {
        secret: readOptional(env, 'GATEWAY_SECRET'),
        replyUrl: readUrl(env, 'GATEWAY_REPLY_URL', HTTP),
        filesUrl: readUrl(env, 'GATEWAY_FILES_URL', HTTP),
      },
      undefined,
    ),
  });
}

function readMentions(env: Env): 'escape' | 'allow' | undefined {
  const value = readOptional(env, 'SLACK_REPLY_MENTIONS');
  if (value === undefined || value === 'escape' || value === 'allow') return value;
  throw new ConfigError('SLACK_REPLY_MENTIONS', 'must be escape (the default) or allow');
}
