import { BOT_USER } from './fake-discord.js';

export const GUILD_ID = '800000000000000001';
export const TEXT_CHANNEL_ID = '810000000000000001';
export const OTHER_CHANNEL_ID = '810000000000000002';
const CATEGORY_ID = '810000000000000009';

export const HUMAN = { id: '700000000000000001', username: 'ada', discriminator: '0', global_name: 'Ada' };

let counter = 0;
function snowflake(): string {
  counter++;
  return (1_300_000_000_000_000_000n + BigInt(counter)).toString();
}

/** A MESSAGE_CREATE `d` payload shaped like Discord's, extra fields and all. */
export function messageCreate(channelId: string, content: string, author: object = HUMAN) {
  return {
    id: snowflake(),
    channel_id: channelId,
    guild_id: GUILD_ID,
    author,
    member: { roles: [], joined_at: '2024-01-01T00:00:00.000000+00:00', deaf: false, mute: false, flags: 0 },
    content,
    timestamp: new Date().toISOString(),
    edited_timestamp: null,
    tts: false,
    mention_everyone: false,
    mentions: [],
    mention_roles: [],
    attachments: [],
    embeds: [],
    pinned: false,
    type: 0,
    flags: 0,
    nonce: snowflake(),
    components: [],
  };
}

export function ownMessage(channelId: string, content: string) {
  return messageCreate(channelId, content, BOT_USER);
}

/** A public thread (type 11) under `parentId`. */
export function publicThread(parentId: string) {
  return {
    id: snowflake(),
    guild_id: GUILD_ID,
    parent_id: parentId,
    owner_id: HUMAN.id,
    type: 11,
    name: 'a thread',
    last_message_id: null,
    rate_limit_per_user: 0,
    message_count: 0,
    member_count: 1,
    thread_metadata: {
      archived: false,
      auto_archive_duration: 1440,
      archive_timestamp: new Date().toISOString(),
      locked: false,
    },
    flags: 0,
  };
}

/** GUILD_CREATE for a guild with one text channel inside a category, and the given active threads. */
export function guildCreate(threads: object[] = []) {
  return {
    id: GUILD_ID,
    name: 'test guild',
    unavailable: false,
    member_count: 2,
    large: false,
    joined_at: '2024-01-01T00:00:00.000000+00:00',
    members: [],
    voice_states: [],
    presences: [],
    stage_instances: [],
    guild_scheduled_events: [],
    roles: [],
    emojis: [],
    features: [],
    channels: [
      { id: CATEGORY_ID, guild_id: GUILD_ID, type: 4, name: 'category', parent_id: null, position: 0 },
      {
        id: TEXT_CHANNEL_ID,
        guild_id: GUILD_ID,
        type: 0,
        name: 'general',
        parent_id: CATEGORY_ID,
        position: 1,
      },
    ],
    threads,
  };
}
