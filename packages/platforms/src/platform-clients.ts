import { DiscordClient } from './discord/client.js';
import type { SlackMentions } from './format/slack-mrkdwn.js';
import { GatewayClient } from './gateway/client.js';
import type { OnPlatformCall } from './http/platform-http.js';
import type { Pace, PlatformClient } from './outbound.js';
import { SlackClient } from './slack/client.js';
import { TelegramClient } from './telegram/client.js';

/** The credentials the clients need; the shape of the platform part of the configuration. */
export interface PlatformCredentials {
  slack?:
    | {
        botToken?: string | undefined;
        /** The bot token of each team answered with a token of its own, by team id (docs/adr/0061). */
        teamTokens?: ReadonlyMap<string, string> | undefined;
        apiUrl: string;
        filesUrl?: string | undefined;
        replyMentions?: SlackMentions | undefined;
        channelPostsPerMinute?: number | undefined;
        replyStreaming?: 'native' | 'edits' | undefined;
      }
    | undefined;
  telegram?: { botToken?: string | undefined; apiUrl: string } | undefined;
  discord?: { botToken?: string | undefined; apiUrl: string; cdnUrl?: string | undefined } | undefined;
  gateway?:
    | { replyUrl?: string | undefined; secret?: string | undefined; filesUrl?: string | undefined }
    | undefined;
}

/** What the clients report besides their answers. */
export interface PlatformHooks {
  onCall?: OnPlatformCall;
  /** A message the platform refused as formatted went out as plain text. */
  onPlainFallback?: (platform: string, method: string, reason: string) => void;
  /** The platform will not stream replies natively here (Slack: the workspace lacks it); edits are used. */
  onStreamingRefused?: (platform: string, reason: string) => void;
  /** Paces posts and edits across the fleet (workers: the store's `FleetPace`). */
  pace?: Pace;
}

/**
 * One outbound client per platform that has credentials to answer with, keyed by the platform that
 * starts its thread keys. Wired explicitly here, never by import side effects.
 */
export function createPlatformClients(
  credentials: PlatformCredentials,
  hooks: PlatformHooks = {},
): Map<string, PlatformClient> {
  const clients = new Map<string, PlatformClient>();
  const { onCall, onPlainFallback, onStreamingRefused, pace } = hooks;
  const common = { ...(onCall ? { onCall } : {}), ...(pace ? { pace } : {}) };
  const { slack, telegram, discord, gateway } = credentials;
  if (slack?.botToken || slack?.teamTokens?.size) {
    clients.set(
      'slack',
      new SlackClient({
        token: slack.botToken ?? '',
        ...(slack.teamTokens?.size ? { teamTokens: slack.teamTokens } : {}),
        baseUrl: slack.apiUrl,
        ...(slack.filesUrl ? { filesUrl: slack.filesUrl } : {}),
        ...(slack.replyMentions ? { mentions: slack.replyMentions } : {}),
        ...(slack.channelPostsPerMinute ? { channelPostsPerMinute: slack.channelPostsPerMinute } : {}),
        ...(slack.replyStreaming ? { replyStreaming: slack.replyStreaming } : {}),
        ...(onStreamingRefused
          ? { onStreamingRefused: (reason: string) => onStreamingRefused('slack', reason) }
          : {}),
        ...common,
      }),
    );
  }
  if (telegram?.botToken) {
    clients.set(
      'telegram',
      new TelegramClient({
        token: telegram.botToken,
        baseUrl: telegram.apiUrl,
        ...(onPlainFallback
          ? { onPlainFallback: (method, reason) => onPlainFallback('telegram', method, reason) }
          : {}),
        ...common,
      }),
    );
  }
  if (discord?.botToken) {
    clients.set(
      'discord',
      new DiscordClient({
        token: discord.botToken,
        baseUrl: discord.apiUrl,
        ...(discord.cdnUrl ? { cdnUrl: discord.cdnUrl } : {}),
        ...common,
      }),
    );
  }
  if (gateway?.replyUrl) {
    clients.set(
      'gateway',
      new GatewayClient({
        replyUrl: gateway.replyUrl,
        ...(gateway.secret ? { secret: gateway.secret } : {}),
        ...(gateway.filesUrl ? { filesUrl: gateway.filesUrl } : {}),
        ...common,
      }),
    );
  }
  return clients;
}
