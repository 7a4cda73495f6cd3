import { runDiscordForwarder } from '@tributary/discord-forwarder';

/** `tributary discord-forwarder`: the Discord Gateway connection, forwarding each message to ingress. */
export async function runDiscordForwarderCommand(): Promise<void> {
  await runDiscordForwarder(process.env);
}
