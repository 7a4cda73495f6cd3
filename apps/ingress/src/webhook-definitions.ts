import type { PlatformConfig } from '@tributary/config';
import {
  DiscordForwardedAdapter,
  DiscordInteractionsAdapter,
  GatewayInboundAdapter,
  type InboundAdapter,
  SlackInboundAdapter,
  TelegramInboundAdapter,
} from '@tributary/platforms';

/** One webhook route and the platform adapter behind it. */
export interface WebhookDefinition {
  path: string;
  /** Label for logs and metrics. */
  platform: string;
  /** Undefined when the platform's secret is not configured: the route answers 404. */
  adapter: InboundAdapter | undefined;
  /** Our own user id on the platform, whose mentions are stripped. */
  selfId: string | undefined;
  /** Which variable turns the route on, for the 404 message. */
  secretVariable: string;
}

/** Every route of DESIGN §10, wired explicitly; a platform without its secret stays off. */
export function webhookDefinitions(platforms: PlatformConfig): WebhookDefinition[] {
  const { slack, telegram, discord, gateway } = platforms;
  return [
    {
      path: '/webhooks/slack',
      platform: 'slack',
      secretVariable: 'SLACK_SIGNING_SECRET',
      selfId: slack?.botUserId,
      adapter: slack?.signingSecret
        ? new SlackInboundAdapter({
            signingSecret: slack.signingSecret,
            ...(slack.botUserId ? { selfUserId: slack.botUserId } : {}),
          })
        : undefined,
    },
    {
      path: '/webhooks/telegram',
      platform: 'telegram',
      secretVariable: 'TELEGRAM_SECRET_TOKEN',
      selfId: telegram?.botUsername,
      adapter: telegram?.secretToken
        ? new TelegramInboundAdapter({
            secretToken: telegram.secretToken,
            ...(telegram.botUsername ? { botUsername: telegram.botUsername } : {}),
          })
        : undefined,
    },
    {
      path: '/webhooks/discord',
      platform: 'discord',
      secretVariable: 'DISCORD_PUBLIC_KEY',
      selfId: discord?.botUserId,
      adapter: discord?.publicKey
        ? new DiscordInteractionsAdapter({ publicKey: discord.publicKey })
        : undefined,
    },
    {
      path: '/webhooks/discord/forwarded',
      platform: 'discord',
      secretVariable: 'DISCORD_FORWARDER_SECRET',
      selfId: discord?.botUserId,
      adapter: discord?.forwarderSecret
        ? new DiscordForwardedAdapter({
            forwarderSecret: discord.forwarderSecret,
            ...(discord.botUserId ? { selfUserId: discord.botUserId } : {}),
          })
        : undefined,
    },
    {
      path: '/webhooks/gateway',
      platform: 'gateway',
      secretVariable: 'GATEWAY_SECRET',
      selfId: undefined,
      adapter: gateway?.secret ? new GatewayInboundAdapter({ secret: gateway.secret }) : undefined,
    },
  ];
}
