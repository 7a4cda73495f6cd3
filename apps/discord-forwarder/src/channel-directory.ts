import type { DiscordForwardedBody } from '@tributary/platforms';
import { ChannelType, GatewayDispatchEvents, type GatewayDispatchPayload } from 'discord-api-types/v10';

/** The `channel` part of a forward, as the ingress adapter reads it. */
export type ForwardedChannel = DiscordForwardedBody['channel'];

interface ChannelShape {
  id: string;
  type: number;
  parent_id?: string | null;
}

const THREAD_TYPES: ReadonlySet<number> = new Set([
  ChannelType.AnnouncementThread,
  ChannelType.PublicThread,
  ChannelType.PrivateThread,
]);

/**
 * What the Gateway has told us about channels, so a message can say whether it is in a thread and
 * of which channel. Bounded: the least recently used entry goes first.
 */
export class ChannelDirectory {
  readonly #entries = new Map<string, { type: number; parentId: string | null }>();

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.#entries.size;
  }

  observe(payload: GatewayDispatchPayload): void {
    switch (payload.t) {
      case GatewayDispatchEvents.GuildCreate:
        // An unavailable guild comes without its channel lists.
        for (const channel of payload.d.channels ?? []) this.#remember(channel);
        for (const thread of payload.d.threads ?? []) this.#remember(thread);
        break;
      case GatewayDispatchEvents.ChannelCreate:
      case GatewayDispatchEvents.ChannelUpdate:
      case GatewayDispatchEvents.ThreadCreate:
      case GatewayDispatchEvents.ThreadUpdate:
        this.#remember(payload.d);
        break;
      case GatewayDispatchEvents.ThreadListSync:
        for (const thread of payload.d.threads) this.#remember(thread);
        break;
      case GatewayDispatchEvents.ChannelDelete:
      case GatewayDispatchEvents.ThreadDelete:
        this.#entries.delete(payload.d.id);
        break;
    }
  }

  describe(channelId: string): ForwardedChannel {
    const entry = this.#entries.get(channelId);
    if (entry === undefined) return { id: channelId, parent_id: null, type: null };
    this.#entries.delete(channelId);
    this.#entries.set(channelId, entry);
    return { id: channelId, parent_id: entry.parentId, type: entry.type };
  }

  #remember(channel: ChannelShape): void {
    // A plain channel's parent_id is its category, which says nothing about threads.
    const parentId = THREAD_TYPES.has(channel.type) ? (channel.parent_id ?? null) : null;
    this.#entries.delete(channel.id);
    this.#entries.set(channel.id, { type: channel.type, parentId });
    if (this.#entries.size > this.capacity) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }
}
