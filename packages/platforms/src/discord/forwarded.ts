import type { LinkAttachment } from '@tributary/packing';
import type { Inbound, InboundAdapter, Verification, WebhookRequest } from '../inbound.js';
import { InvalidWebhookError } from '../inbound.js';
import { ignored, messageInbound } from '../inbound-message.js';
import { compact, type JsonFields, readJsonBody } from '../json-body.js';
import { isoFromRfc3339 } from '../platform-time.js';
import { requireSecret, verifyTributarySignature } from '../webhook-checks.js';
import { discordDelete, discordEdit } from './edit-events.js';
import { DISCORD_FORWARDED_SCHEMA } from './forwarded-schema.js';
import { discordPlace, snowflake, stripDiscordMention } from './ids.js';

const CHAT_MESSAGE_TYPES = new Set([0, 19]);

export interface DiscordForwardedOptions {
  /** DISCORD_FORWARDER_SECRET, shared with the forwarder. */
  forwarderSecret: string;
  /** Our bot's user id: the Gateway shows the bot its own messages, which must not loop back. */
  selfUserId?: string;
}

/**
 * Channel messages relayed by our Gateway forwarder (body: DiscordForwardedBody). Thread key
 * `discord:<message.channel_id>` (a Discord thread is a channel), dedup key
 * `discord:<channel_id>:<message id>`.
 */
export class DiscordForwardedAdapter implements InboundAdapter {
  readonly platform = 'discord';

  constructor(private readonly options: DiscordForwardedOptions) {
    requireSecret(options.forwarderSecret, 'forwarderSecret');
  }

  verify(request: WebhookRequest): Verification {
    return verifyTributarySignature(this.options.forwarderSecret, request);
  }

  parse(request: WebhookRequest): Inbound {
    const body = readJsonBody(request.rawBody);
    if (body.string('schema') !== DISCORD_FORWARDED_SCHEMA) {
      throw new InvalidWebhookError(`schema must be ${DISCORD_FORWARDED_SCHEMA}`);
    }
    const dispatch = body.optionalString('dispatch') ?? 'MESSAGE_CREATE';
    switch (dispatch) {
      case 'MESSAGE_CREATE':
        return this.parseMessage(body);
      case 'MESSAGE_UPDATE':
        return discordEdit(body.object('message'), this.parseMessage(body));
      case 'MESSAGE_DELETE':
        return discordDelete(body.object('message'));
      default:
        throw new InvalidWebhookError(`dispatch must be MESSAGE_CREATE, MESSAGE_UPDATE or MESSAGE_DELETE`);
    }
  }

  private parseMessage(body: JsonFields): Inbound {
    const message = body.object('message');
    const channel = body.object('channel');
    const channelId = snowflake(message, 'channel_id');
    if (snowflake(channel, 'id') !== channelId) {
      throw new InvalidWebhookError('channel.id must equal message.channel_id');
    }
    // channel.type may be unknown to the forwarder (a DM, a channel it has not seen yet): discordPlace
    // then reads it as a plain channel, and the thread key is the message's channel either way.
    const type = message.integer('type');
    if (!CHAT_MESSAGE_TYPES.has(type)) return ignored(`discord message type ${type}`);
    const author = message.object('author');
    const authorId = snowflake(author, 'id');
    if (authorId === this.options.selfUserId) return ignored('discord message from ourselves');
    const id = snowflake(message, 'id');
    const place = discordPlace(channelId, channel);
    const username = author.string('username');
    const guild = message.optionalString('guild_id') || undefined;
    return messageInbound({
      event: {
        eventId: id,
        platform: 'discord',
        ...place,
        sender: {
          id: authorId,
          name: username,
          displayName:
            message.optionalObject('member')?.optionalString('nick') ||
            author.optionalString('global_name') ||
            username,
          isBot: author.optionalBoolean('bot') ?? false,
        },
        timestamp: isoFromRfc3339(message.string('timestamp'), message.field('timestamp')),
        text: message.string('content'),
        attachments: message.objects('attachments').map(discordAttachment),
        // The guild, for the routes that name one (docs/adr/0058); a direct message has none.
        ...(guild === undefined ? {} : { workspaceId: guild }),
      },
      thread: `discord:${channelId}`,
      idempotencyKey: `discord:${channelId}:${id}`,
      mentions: message.objects('mentions').map((user) => snowflake(user, 'id')),
      ref: { platform: 'discord', ...place, messageId: id },
      // Guild messages carry their guild; a direct message has none.
      direct: !message.has('guild_id'),
    });
  }

  stripSelfMention(text: string, selfId: string, selfName?: string): string {
    return stripDiscordMention(text, selfId, selfName);
  }
}

/** The CDN URL is both the link and the source a worker downloads. */
function discordAttachment(attachment: JsonFields): LinkAttachment {
  const url = attachment.string('url');
  return {
    kind: 'link',
    uri: url,
    name: attachment.nonEmptyString('filename'),
    mimeType: attachment.optionalString('content_type'),
    source: compact({ platform: 'discord', ref: url, size: attachment.optionalInteger('size') }),
  };
}
