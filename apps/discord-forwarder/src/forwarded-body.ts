import {
  DISCORD_FORWARDED_SCHEMA,
  type DiscordForwardedBody,
  type DiscordForwardedDispatch,
} from '@tributary/platforms';
import type {
  GatewayMessageCreateDispatchData,
  GatewayMessageDeleteDispatchData,
  GatewayMessageUpdateDispatchData,
} from 'discord-api-types/v10';
import type { ForwardedChannel } from './channel-directory.js';

export const FORWARD_PATH = '/webhooks/discord/forwarded';

/** The `d` of a message dispatch the forwarder passes on. */
export type ForwardedMessage =
  | GatewayMessageCreateDispatchData
  | GatewayMessageUpdateDispatchData
  | GatewayMessageDeleteDispatchData;

/**
 * The raw body of one forward: a message dispatch's payload untouched, which dispatch it was (absent for
 * MESSAGE_CREATE, as before edits were forwarded), plus what we know of its channel.
 */
export function forwardedBody(
  dispatch: DiscordForwardedDispatch,
  message: ForwardedMessage,
  channel: ForwardedChannel,
): string {
  const body: Omit<DiscordForwardedBody, 'message'> & { message: ForwardedMessage } = {
    schema: DISCORD_FORWARDED_SCHEMA,
    ...(dispatch === 'MESSAGE_CREATE' ? {} : { dispatch }),
    message,
    channel,
  };
  return JSON.stringify(body);
}
