import type { GatewayMessageCreateDispatchData } from 'discord-api-types/v10';
import type { ForwardedChannel } from './channel-directory.js';

/** Parsed by the Discord adapter in @tributary/platforms; change both together. */
export const FORWARDED_SCHEMA = 'tributary.discord.forwarded.v1';

export const FORWARD_PATH = '/webhooks/discord/forwarded';

/** The raw body of one forward: the MESSAGE_CREATE payload untouched, plus what we know of its channel. */
export function forwardedBody(message: GatewayMessageCreateDispatchData, channel: ForwardedChannel): string {
  return JSON.stringify({ schema: FORWARDED_SCHEMA, message, channel });
}
