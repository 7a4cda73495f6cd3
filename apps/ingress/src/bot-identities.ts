import { ConfigError, type PlatformConfig } from '@tributary/config';
import type { BotIdentity, PlatformClient } from '@tributary/platforms';
import type { Logger } from 'pino';

/** Who we are on a platform, as far as known: the id its mentions name, and the name people write. */
export interface BotSelf {
  id: string;
  /** Unknown when the id was configured and the platform could not be asked. */
  name?: string;
}

type BotPlatform = 'slack' | 'telegram' | 'discord';

export type BotIdentities = Partial<Record<BotPlatform, BotSelf>> & {
  /** Our bot in each Slack team answered with a token of its own (SLACK_TEAM_TOKENS_DIR), by team id. */
  slackTeams?: ReadonlyMap<string, BotSelf>;
};

interface IdentityNeed {
  platform: BotPlatform;
  /** The variable that names us, and the one whose token lets us ask. */
  variable: string;
  tokenVariable: string;
  /** The platform call that tells who the token belongs to. */
  call: string;
  /** Whether a route that reads mentions is on, and what is configured. */
  of(platforms: PlatformConfig): { enabled: boolean; configured: string | undefined };
}

const NEEDS: IdentityNeed[] = [
  {
    platform: 'slack',
    variable: 'SLACK_BOT_USER_ID',
    tokenVariable: 'SLACK_BOT_TOKEN',
    call: 'auth.test',
    // With further teams' tokens alone, no team is answered as the deployment's own: nobody to ask.
    of: ({ slack }) => ({
      enabled: !!slack?.signingSecret && (slack.botToken !== undefined || slack.teamTokens === undefined),
      configured: slack?.botUserId,
    }),
  },
  {
    platform: 'telegram',
    variable: 'TELEGRAM_BOT_USERNAME',
    tokenVariable: 'TELEGRAM_BOT_TOKEN',
    call: 'getMe',
    of: ({ telegram }) => ({ enabled: !!telegram?.secretToken, configured: telegram?.botUsername }),
  },
  {
    platform: 'discord',
    variable: 'DISCORD_BOT_USER_ID',
    tokenVariable: 'DISCORD_BOT_TOKEN',
    call: '/users/@me',
    of: ({ discord }) => ({ enabled: !!discord?.forwarderSecret, configured: discord?.botUserId }),
  },
];

/** The identities as configured, without asking any platform. */
export function configuredIdentities(platforms: PlatformConfig): BotIdentities {
  const identities: BotIdentities = {};
  for (const need of NEEDS) {
    const { configured } = need.of(platforms);
    if (configured !== undefined) identities[need.platform] = selfOf(need, configured, undefined);
  }
  return identities;
}

/**
 * Asks each platform whose messages ingress reads who we are. Without our id every mention of us in a
 * channel would go unnoticed and be answered `not-addressed`, so an identity that is neither configured
 * nor discoverable stops the start with a ConfigError naming the fix. A configured id wins over the
 * discovered one; the discovered name is still what a mention in mid-sentence becomes.
 */
export async function discoverBotIdentities(
  platforms: PlatformConfig,
  clients: ReadonlyMap<string, PlatformClient>,
  logger: Logger,
): Promise<BotIdentities> {
  const identities: BotIdentities = {};
  /** The team SLACK_BOT_TOKEN belongs to, as auth.test told. */
  let slackHome: string | undefined;
  for (const need of NEEDS) {
    const { enabled, configured } = need.of(platforms);
    if (!enabled) continue;
    const client = clients.get(need.platform);
    if (client?.whoAmI === undefined) {
      if (configured === undefined) {
        throw new ConfigError(
          need.variable,
          `is unset and there is no ${need.tokenVariable} to ask ${need.call} with; set ${need.variable} or ${need.tokenVariable}`,
        );
      }
      identities[need.platform] = selfOf(need, configured, undefined);
      continue;
    }
    try {
      const found = await client.whoAmI();
      if (configured !== undefined && configured.toLowerCase() !== found.id.toLowerCase()) {
        logger.warn(
          { platform: need.platform, configured, discovered: found.id },
          `${need.variable} differs from the bot ${need.tokenVariable} belongs to; using ${need.variable}`,
        );
      }
      identities[need.platform] = selfOf(need, configured ?? found.id, found.name);
      if (need.platform === 'slack') slackHome = found.workspaceId;
      logger.info({ platform: need.platform, ...identities[need.platform] }, 'bot identity');
    } catch (error) {
      if (configured === undefined) {
        throw new ConfigError(
          need.variable,
          `is unset and ${need.call} could not tell it (${(error as Error).message}); set ${need.variable}, or a ${need.tokenVariable} the platform accepts`,
        );
      }
      logger.warn(
        { platform: need.platform, err: error },
        `${need.call} failed; using ${need.variable}, and mentions of us in mid-sentence stay as written`,
      );
      identities[need.platform] = selfOf(need, configured, undefined);
    }
  }
  const slackTeams = await discoverSlackTeams(platforms, clients, logger, slackHome);
  return slackTeams === undefined ? identities : { ...identities, slackTeams };
}

/**
 * Our bot in each team of SLACK_TEAM_TOKENS_DIR, asked with that team's token: each team has its own bot
 * user, whose messages must be known as ours and whose mentions address us. A token that cannot tell, or
 * belongs to another team than its file names, stops the start: that team's threads would otherwise
 * answer themselves, or be answered in the wrong workspace.
 */
async function discoverSlackTeams(
  platforms: PlatformConfig,
  clients: ReadonlyMap<string, PlatformClient>,
  logger: Logger,
  home: string | undefined,
): Promise<ReadonlyMap<string, BotSelf> | undefined> {
  const teams = platforms.slack?.signingSecret ? platforms.slack.teamTokens : undefined;
  const client = clients.get('slack');
  if (teams === undefined || client?.whoAmI === undefined) return undefined;
  if (home !== undefined && teams.has(home)) {
    // A file would re-key the threads the deployment's own team already has.
    throw new ConfigError(
      'SLACK_TEAM_TOKENS_DIR',
      `${home} is the team of SLACK_BOT_TOKEN, which answers it already; remove its file`,
    );
  }
  const found = new Map<string, BotSelf>();
  for (const team of teams.keys()) {
    let bot: BotIdentity;
    try {
      bot = await client.whoAmI(team);
    } catch (error) {
      throw new ConfigError(
        'SLACK_TEAM_TOKENS_DIR',
        `auth.test with the token of team ${team} failed (${(error as Error).message}); fix or remove its file`,
      );
    }
    if (bot.workspaceId !== undefined && bot.workspaceId !== team) {
      throw new ConfigError(
        'SLACK_TEAM_TOKENS_DIR',
        `the file ${team} holds a token of team ${bot.workspaceId}; name each file by its token's team`,
      );
    }
    found.set(team, { id: bot.id, name: bot.name });
    logger.info({ platform: 'slack', team, id: bot.id, name: bot.name }, 'bot identity in a further team');
  }
  return found;
}

/** On Telegram the id is the username, which is also the name people write. */
function selfOf(need: IdentityNeed, id: string, name: string | undefined): BotSelf {
  const known = name ?? (need.platform === 'telegram' ? id : undefined);
  return known === undefined ? { id } : { id, name: known };
}
