import { runDiscordForwarder } from '@tributary/discord-forwarder';
import { type Command, refuseArguments } from './command-line.js';
import { USAGES } from './usages.js';

/** `tributary discord-forwarder`: the Discord Gateway connection, forwarding each message to ingress. */
export const discordForwarderCommand: Command = {
  usage: USAGES['discord-forwarder'],
  async run(argv) {
    refuseArguments('discord-forwarder', argv);
    await runDiscordForwarder(process.env);
  },
};
