import { runDiscordForwarder } from '@tributary/discord-forwarder';
import { type Command, refuseArguments } from './command-line.js';

/** `tributary discord-forwarder`: the Discord Gateway connection, forwarding each message to ingress. */
export const discordForwarderCommand: Command = {
  async run(argv) {
    refuseArguments('discord-forwarder', argv);
    await runDiscordForwarder(process.env);
  },
};
