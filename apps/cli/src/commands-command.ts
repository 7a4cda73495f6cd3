import { loadPlatformConfig } from '@tributary/config';
import {
  COMMAND_DESCRIPTIONS,
  DiscordClient,
  type ListedCommand,
  TelegramClient,
  THREAD_COMMANDS,
} from '@tributary/platforms';
import { type Command, parseCommandArgs, UsageError } from './command-line.js';

const say = (line = '') => process.stdout.write(`${line}\n`);

const LISTED: ListedCommand[] = THREAD_COMMANDS.map((name) => ({
  name,
  description: COMMAND_DESCRIPTIONS[name],
}));

/** `tributary commands register | slack-manifest --url URL`. */
export const commandsCommand: Command = {
  async run(argv) {
    const { values, positionals } = parseCommandArgs(argv, { url: { type: 'string' } }, true);
    const [what, ...rest] = positionals;
    if (rest.length > 0) throw new UsageError(`unexpected argument '${rest[0]}'`);
    if (what === 'register') return register();
    if (what === 'slack-manifest') {
      if (values.url === undefined)
        throw new UsageError('slack-manifest needs --url, the address of ingress');
      return slackManifest(values.url);
    }
    throw new UsageError(what === undefined ? 'say what: register or slack-manifest' : `unknown '${what}'`);
  },
};

/** Registers the commands with each platform whose bot token is set; exit 1 when one refused. */
async function register(): Promise<void> {
  const { discord, telegram } = loadPlatformConfig(process.env);
  const names = LISTED.map(({ name }) => `/${name}`).join(', ');
  let failed = false;
  const attempt = async (platform: string, run: () => Promise<string>) => {
    try {
      say(`✓ ${platform}: ${await run()}`);
    } catch (error) {
      failed = true;
      say(`✗ ${platform}: ${(error as Error).message}`);
    }
  };
  if (discord?.botToken) {
    const client = new DiscordClient({ token: discord.botToken, baseUrl: discord.apiUrl });
    await attempt('Discord', async () => {
      const application = await client.registerCommands(LISTED);
      return `registered ${names} as the global commands of application ${application} (they may take a few minutes to appear)`;
    });
  } else {
    say('– Discord: DISCORD_BOT_TOKEN is not set; skipped');
  }
  if (telegram?.botToken) {
    const client = new TelegramClient({ token: telegram.botToken, baseUrl: telegram.apiUrl });
    await attempt('Telegram', async () => {
      await client.setCommands(LISTED);
      return `set the bot's command list: ${names.replace('/cancel-all', '/cancel_all')}`;
    });
  } else {
    say('– Telegram: TELEGRAM_BOT_TOKEN is not set; skipped');
  }
  say(
    "– Slack: slash commands live in the app's settings; `tributary commands slack-manifest --url URL` prints them",
  );
  if (failed) process.exitCode = 1;
}

/** The part of a Slack app manifest that routes `/tributary` to ingress. */
function slackManifest(url: string): void {
  if (!URL.canParse(url)) throw new UsageError(`--url must be an absolute URL, got '${url}'`);
  const base = url.replace(/\/+$/, '');
  const manifest = {
    features: {
      slash_commands: [
        {
          command: '/tributary',
          url: `${base}/webhooks/slack/commands`,
          description: 'Cancel, reset or ask the status of your latest conversation here',
          usage_hint: THREAD_COMMANDS.join(' | '),
          should_escape: false,
        },
      ],
    },
    settings: {
      event_subscriptions: { request_url: `${base}/webhooks/slack` },
      interactivity: { is_enabled: true, request_url: `${base}/webhooks/slack/interactivity` },
    },
  };
  say(JSON.stringify(manifest, null, 2));
}
