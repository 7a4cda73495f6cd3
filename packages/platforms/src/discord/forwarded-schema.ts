/** Schema id of the body our Discord Gateway forwarder posts to `/webhooks/discord/forwarded`. */
export const DISCORD_FORWARDED_SCHEMA = 'tributary.discord.forwarded.v1';

/**
 * What the forwarder posts, signed with `x-tributary-timestamp` and `x-tributary-signature` (DISCORD_FORWARDER_SECRET): one Gateway
 * MESSAGE_CREATE and the channel it was posted in, which the Gateway event alone does not describe
 * (is it a thread, and of which channel?).
 */
export interface DiscordForwardedBody {
  schema: typeof DISCORD_FORWARDED_SCHEMA;
  /** Which Gateway dispatch `message` is; absent means MESSAGE_CREATE (forwarders before edits). */
  dispatch?: DiscordForwardedDispatch;
  /**
   * The `d` of the dispatch, passed on unchanged; fields not listed here are ignored. A MESSAGE_UPDATE
   * carries the message as it now reads with `edited_timestamp`; a MESSAGE_DELETE only `id`,
   * `channel_id` and, in a guild, `guild_id`.
   */
  message: DiscordGatewayMessage;
  channel: {
    id: string;
    /** For a thread, the channel it belongs to; for other channels their category, or null. */
    parent_id: string | null;
    /** Discord channel type (10, 11 and 12 are threads); null when the forwarder has not seen the channel. */
    type: number | null;
  };
}

export type DiscordForwardedDispatch = 'MESSAGE_CREATE' | 'MESSAGE_UPDATE' | 'MESSAGE_DELETE';

/** The MESSAGE_CREATE fields the adapter reads (MESSAGE_UPDATE adds `edited_timestamp`). */
export interface DiscordGatewayMessage {
  id: string;
  channel_id: string;
  /** 0 (default) and 19 (reply) are chat messages; other types (joins, pins, …) are ignored. */
  type: number;
  content: string;
  /** RFC 3339 with offset, e.g. '2025-01-01T09:30:00.123000+00:00'. */
  timestamp: string;
  author: { id: string; username: string; global_name?: string | null; bot?: boolean };
  /** Present in guilds. */
  member?: { nick?: string | null };
  attachments: { id: string; filename: string; url: string; content_type?: string; size?: number }[];
  mentions: { id: string }[];
  /** RFC 3339; set on a MESSAGE_UPDATE that is an edit, null on one that only added embeds. */
  edited_timestamp?: string | null;
}
