import { generateKeyPairSync, sign } from 'node:crypto';
import {
  DISCORD_FORWARDED_SCHEMA,
  DiscordForwardedAdapter,
  type DiscordForwardedBody,
  DiscordInteractionsAdapter,
  signedRequestHeaders,
  type WebhookRequest,
} from '../src/index.js';
import { NOW, webhookRequest } from './support-inbound.js';

const { publicKey, privateKey } = generateKeyPairSync('ed25519');

/** The application public key as the developer portal shows it: 32 bytes of hex. */
export const PUBLIC_KEY_HEX = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString(
  'hex',
);

export const interactions = new DiscordInteractionsAdapter({ publicKey: PUBLIC_KEY_HEX });

export const FORWARDER_SECRET = 'discord-forwarder-secret-for-tests';
export const BOT_USER = '100000000000000001';
export const CHANNEL = '200000000000000002';
export const THREAD = '300000000000000003';
export const CATEGORY = '400000000000000004';

export const forwarded = new DiscordForwardedAdapter({
  forwarderSecret: FORWARDER_SECRET,
  selfUserId: BOT_USER,
});

/** Signed as Discord signs: Ed25519 over the timestamp followed by the raw body. */
export function signedInteraction(
  body: unknown,
  key = privateKey,
  timestamp = String(NOW / 1000),
): WebhookRequest {
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  const signature = sign(null, Buffer.from(timestamp + raw), key).toString('hex');
  return webhookRequest(raw, { 'x-signature-ed25519': signature, 'x-signature-timestamp': timestamp });
}

export function slashCommand(name: string, extra: Record<string, unknown> = {}) {
  return {
    id: '500000000000000005',
    application_id: '600000000000000006',
    type: 2,
    token: 'interaction-token',
    version: 1,
    channel_id: CHANNEL,
    channel: { id: CHANNEL, type: 0, parent_id: CATEGORY },
    data: { id: '700000000000000007', name, type: 1 },
    member: { user: { id: '900000000000000009', username: 'ada' } },
    ...extra,
  };
}

type Message = Record<string, unknown>;

export function forwardedBody(
  message: Message = {},
  channel: Partial<DiscordForwardedBody['channel']> = {},
): DiscordForwardedBody {
  return {
    schema: DISCORD_FORWARDED_SCHEMA,
    message: {
      id: '800000000000000008',
      channel_id: CHANNEL,
      guild_id: '900000000000000009',
      type: 0,
      content: 'check the build',
      timestamp: '2025-01-01T09:30:00.123456+00:00',
      author: { id: '110000000000000011', username: 'alice', global_name: 'Alice Liddell', bot: false },
      member: { nick: null },
      attachments: [],
      mentions: [],
      ...message,
    } as DiscordForwardedBody['message'],
    channel: { id: CHANNEL, parent_id: CATEGORY, type: 0, ...channel },
  };
}

export function signedForward(body: unknown, secret = FORWARDER_SECRET): WebhookRequest {
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  return webhookRequest(raw, signedRequestHeaders(secret, raw, NOW));
}
