import type { PlatformConfig } from '@tributary/config';
import {
  DiscordForwardedAdapter,
  DiscordInteractionsAdapter,
  GatewayInboundAdapter,
  type InboundAdapter,
  SlackCommandsAdapter,
  SlackInboundAdapter,
  SlackInteractivityAdapter,
  type SlackSelf,
  TelegramInboundAdapter,
} from '@tributary/platforms';
import { type BotIdentities, type BotSelf, configuredIdentities } from './bot-identities.js';

/** One webhook route and the platform adapter behind it. */
export interface WebhookDefinition {
  path: string;
  /** Label for logs and metrics. */
  platform: string;
  /** Undefined when the platform's secret is not configured: the route answers 404. */
  adapter: InboundAdapter | undefined;
  /** Who we are on the platform: mentions of us are stripped or turned into our name. */
  self: BotSelf | undefined;
  /** Who we are in a workspace answered with a token of its own, where that differs (Slack teams). */
  selves?: ReadonlyMap<string, BotSelf>;
  /** Which variable turns the route on, for the 404 message. */
  secretVariable: string;
  /** What the platform posts there; `application/json` when not said. */
  mediaType?: 'application/json' | 'application/x-www-form-urlencoded';
}

/**
 * Every route of DESIGN §10, wired explicitly; a platform without its secret stays off. `identities`
 * are those discovered at start-up (discoverBotIdentities); the configured ones by default.
 * `telegramMaxAgeMs`: TELEGRAM_MAX_AGE_MS (the adapter's default when not given).
 */
export function webhookDefinitions(
  platforms: PlatformConfig,
  identities: BotIdentities = configuredIdentities(platforms),
  { telegramMaxAgeMs }: { telegramMaxAgeMs?: number } = {},
): WebhookDefinition[] {
  const { slack, telegram, discord, gateway } = platforms;
  const slackSelf = identities.slack?.id;
  const slackTeams = slackTeamSelves(platforms, identities);
  const telegramSelf = identities.telegram?.id;
  const discordSelf = identities.discord?.id;
  return [
    {
      path: '/webhooks/slack',
      platform: 'slack',
      secretVariable: 'SLACK_SIGNING_SECRET',
      self: identities.slack,
      ...(identities.slackTeams ? { selves: identities.slackTeams } : {}),
      adapter: slack?.signingSecret
        ? new SlackInboundAdapter({
            signingSecret: slack.signingSecret,
            ...(slackSelf ? { selfUserId: slackSelf } : {}),
            ...(slackTeams ? { teams: slackTeams } : {}),
          })
        : undefined,
    },
    {
      path: '/webhooks/slack/commands',
      platform: 'slack',
      secretVariable: 'SLACK_SIGNING_SECRET',
      self: identities.slack,
      mediaType: 'application/x-www-form-urlencoded',
      adapter: slack?.signingSecret
        ? new SlackCommandsAdapter({ signingSecret: slack.signingSecret })
        : undefined,
    },
    {
      path: '/webhooks/slack/interactivity',
      platform: 'slack',
      secretVariable: 'SLACK_SIGNING_SECRET',
      self: identities.slack,
      mediaType: 'application/x-www-form-urlencoded',
      adapter: slack?.signingSecret
        ? new SlackInteractivityAdapter({ signingSecret: slack.signingSecret })
        : undefined,
    },
    {
      path: '/webhooks/telegram',
      platform: 'telegram',
      secretVariable: 'TELEGRAM_SECRET_TOKEN',
      self: identities.telegram,
      adapter: telegram?.secretToken
        ? new TelegramInboundAdapter({
            secretToken: telegram.secretToken,
            ...(telegramSelf ? { botUsername: telegramSelf } : {}),
            ...(telegramMaxAgeMs === undefined ? {} : { maxAgeMs: telegramMaxAgeMs }),
          })
        : undefined,
    },
    {
      path: '/webhooks/discord',
      platform: 'discord',
      secretVariable: 'DISCORD_PUBLIC_KEY',
      self: identities.discord,
      adapter: discord?.publicKey
        ? new DiscordInteractionsAdapter({ publicKey: discord.publicKey })
        : undefined,
    },
    {
      path: '/webhooks/discord/forwarded',
      platform: 'discord',
      secretVariable: 'DISCORD_FORWARDER_SECRET',
      self: identities.discord,
      adapter: discord?.forwarderSecret
        ? new DiscordForwardedAdapter({
            forwarderSecret: discord.forwarderSecret,
            ...(discordSelf ? { selfUserId: discordSelf } : {}),
          })
        : undefined,
    },
    {
      path: '/webhooks/gateway',
      platform: 'gateway',
      secretVariable: 'GATEWAY_SECRET',
      self: undefined,
      adapter: gateway?.secret ? new GatewayInboundAdapter({ secret: gateway.secret }) : undefined,
    },
  ];
}

/** Each team of SLACK_TEAM_TOKENS_DIR with our bot there, as far as known: its keys name the team. */
function slackTeamSelves(
  platforms: PlatformConfig,
  identities: BotIdentities,
): ReadonlyMap<string, SlackSelf> | undefined {
  const teams = platforms.slack?.teamTokens;
  if (teams === undefined) return undefined;
  return new Map(
    [...teams.keys()].map((team) => {
      const id = identities.slackTeams?.get(team)?.id;
      return [team, id === undefined ? {} : { selfUserId: id }];
    }),
  );
}
