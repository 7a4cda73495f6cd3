import { createPublicKey, type KeyObject, verify } from 'node:crypto';
import { readApprovalButton } from '../approval-buttons.js';
import type { Inbound, InboundAdapter, Verification, WebhookRequest } from '../inbound.js';
import { ignored } from '../inbound-message.js';
import { type JsonFields, readJsonBody } from '../json-body.js';
import { isThreadCommand } from '../thread-commands.js';
import { freshTimestamp, rejected, VERIFIED } from '../webhook-checks.js';
import { discordPlace, snowflake, stripDiscordMention } from './ids.js';

export const DISCORD_SIGNATURE_HEADER = 'x-signature-ed25519';
export const DISCORD_TIMESTAMP_HEADER = 'x-signature-timestamp';

const PING = 1;
const APPLICATION_COMMAND = 2;
const MESSAGE_COMPONENT = 3;
const CHANNEL_MESSAGE_WITH_SOURCE = 4;
/** Acknowledges a component click without a new message; the request's message is edited after. */
const DEFERRED_UPDATE_MESSAGE = 6;
const EPHEMERAL = 64;

export interface DiscordInteractionsOptions {
  /** The application's public key: 32 bytes as hex, as the developer portal shows it. */
  publicKey: string;
}

/**
 * The interactions endpoint: PING and the application commands /cancel, /cancel-all, /reset, /status
 * and /help (`tributary commands register` registers them). Channel
 * messages do not come this way (see DiscordForwardedAdapter). Thread key `discord:<channel_id>`.
 */
export class DiscordInteractionsAdapter implements InboundAdapter {
  readonly platform = 'discord';
  private readonly publicKey: KeyObject;

  constructor(options: DiscordInteractionsOptions) {
    this.publicKey = ed25519PublicKey(options.publicKey);
  }

  verify(request: WebhookRequest): Verification {
    const fresh = freshTimestamp(request, DISCORD_TIMESTAMP_HEADER);
    if (!fresh.ok) return fresh;
    const signature = request.headers[DISCORD_SIGNATURE_HEADER];
    if (signature === undefined) return rejected(`missing ${DISCORD_SIGNATURE_HEADER} header`);
    if (!/^[0-9a-f]{128}$/i.test(signature))
      return rejected(`${DISCORD_SIGNATURE_HEADER} is not 64 bytes of hex`);
    const signed = Buffer.concat([Buffer.from(fresh.timestamp), request.rawBody]);
    return verify(null, signed, this.publicKey, Buffer.from(signature, 'hex'))
      ? VERIFIED
      : rejected(`${DISCORD_SIGNATURE_HEADER} does not match the body`);
  }

  parse(request: WebhookRequest): Inbound {
    const interaction = readJsonBody(request.rawBody);
    const type = interaction.integer('type');
    if (type === PING) return { kind: 'handshake', body: { type: PING } };
    if (type === MESSAGE_COMPONENT) return this.click(interaction);
    if (type !== APPLICATION_COMMAND) return ignored(`discord interaction type ${type}`);
    const command = interaction.object('data').string('name');
    if (!isThreadCommand(command)) return ignored(`discord command /${command}`);
    const channelId = snowflake(interaction, 'channel_id');
    // In a guild the invoker comes as `member.user`, in a direct message as `user`.
    const invoker =
      interaction.optionalObject('member')?.optionalObject('user') ?? interaction.object('user');
    const id = snowflake(interaction, 'id');
    return {
      kind: 'control',
      command,
      senderId: snowflake(invoker, 'id'),
      thread: `discord:${channelId}`,
      idempotencyKey: `discord:${channelId}:interaction:${id}`,
      // An interaction is not a message: its own id stands in, for logs and correlation.
      ref: {
        platform: 'discord',
        ...discordPlace(channelId, interaction.optionalObject('channel')),
        messageId: id,
      },
      // Only the invoker sees the confirmation; the channel is not cluttered with it.
      respond: (confirmation) => ({
        type: CHANNEL_MESSAGE_WITH_SOURCE,
        data: { content: confirmation, flags: EPHEMERAL },
      }),
    };
  }

  /** A click on a button of a permission request; a refusal is answered to the clicker alone. */
  private click(interaction: JsonFields): Inbound {
    const button = readApprovalButton(interaction.object('data').optionalString('custom_id') ?? '');
    if (button === undefined) return ignored('discord component that is not ours');
    const channelId = snowflake(interaction, 'channel_id');
    const member = interaction.optionalObject('member');
    const invoker = member?.optionalObject('user') ?? interaction.object('user');
    const id = snowflake(interaction, 'id');
    return {
      kind: 'approval',
      userRoles: member?.has('roles') ? member.strings('roles') : [],
      approvalId: button.id,
      option: button.option,
      userId: snowflake(invoker, 'id'),
      userName: invoker.optionalString('global_name') ?? invoker.string('username'),
      ref: {
        platform: 'discord',
        ...discordPlace(channelId, interaction.optionalObject('channel')),
        messageId: snowflake(interaction.object('message'), 'id'),
      },
      idempotencyKey: `discord:${channelId}:interaction:${id}`,
      privately: true,
      respond: (answer) =>
        answer === undefined
          ? { type: DEFERRED_UPDATE_MESSAGE }
          : { type: CHANNEL_MESSAGE_WITH_SOURCE, data: { content: answer, flags: EPHEMERAL } },
    };
  }

  stripSelfMention(text: string, selfId: string, selfName?: string): string {
    return stripDiscordMention(text, selfId, selfName);
  }
}

function ed25519PublicKey(hex: string): KeyObject {
  if (!/^[0-9a-f]{64}$/i.test(hex)) throw new Error('publicKey must be 32 bytes of hex');
  const x = Buffer.from(hex, 'hex').toString('base64url');
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
}
