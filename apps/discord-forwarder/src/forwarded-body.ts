import { DISCORD_FORWARDED_SCHEMA, type DiscordForwardedBody } from '@tributary/platforms';
import type { GatewayMessageCreateDispatchData } from 'discord-api-types/v10';
import type { ForwardedChannel } from './channel-directory.js';

export const FORWARD_PATH = '/webhooks/discord/forwarded';

/** The raw body of one forward: the MESSAGE_CREATE payload untouched, plus what we know of its channel. */
export function forwardedBody(message: GatewayMessageCreateDispatchData, channel: ForwardedChannel): string {
  const body: Omit<DiscordForwardedBody, 'message'> & { message: GatewayMessageCreateDispatchData } = {
    schema: DISCORD_FORWARDED_SCHEMA,
    message,
    channel,
  };
  return JSON.stringify(body);
}
