import { runDiscordForwarder } from '@tributary/discord-forwarder';
import { type Command, refuseArguments } from './command-line.js';

/** `tributary discord-forwarder`: the Discord Gateway connection, forwarding each message to ingress. */
export const discordForwarderCommand: Command = {
  usage: `usage: tributary discord-forwarder

Holds the Discord Gateway connection and forwards each message, signed, to ingress. Takes no options:
it is configured by environment variables (DISCORD_BOT_TOKEN, DISCORD_FORWARDER_SECRET,
FORWARD_URL; README, "Platforms").`,
  async run(argv) {
    refuseArguments('discord-forwarder', argv);
    await runDiscordForwarder(process.env);
  },
};
