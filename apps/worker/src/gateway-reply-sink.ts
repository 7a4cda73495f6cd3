import { createHmac } from 'node:crypto';
import type { OutboundMessage, ReplySink } from './outbox.js';

export const GATEWAY_REPLY_SCHEMA = 'openab.gateway.reply.v1';

/** The body posted to an openab-compatible gateway. */
export function gatewayReplyBody(message: OutboundMessage) {
  return {
    schema: GATEWAY_REPLY_SCHEMA,
    reply_id: `${message.batchId}:${message.kind}`,
    kind: message.kind,
    channel: message.target.platform,
    channel_id: message.target.channelId,
    ...(message.target.threadId === undefined ? {} : { thread_id: message.target.threadId }),
    reply_to: message.target.replyToEventId,
    text: message.text,
    ...(message.stopReason === undefined ? {} : { stop_reason: message.stopReason }),
  };
}

/** HMAC-SHA256 of the raw body, hex, as `sha256=<hex>`: the same scheme the gateway webhook uses. */
export function signBody(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Posts replies to GATEWAY_REPLY_URL; a non-2xx answer is an error so the turn's delivery is retried. */
export class GatewayReplySink implements ReplySink {
  readonly name = 'gateway';

  constructor(
    private readonly url: string,
    private readonly secret: string | undefined,
    private readonly timeoutMs = 10_000,
  ) {}

  async send(message: OutboundMessage): Promise<void> {
    const body = JSON.stringify(gatewayReplyBody(message));
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'idempotency-key': `${message.batchId}:${message.kind}`,
    };
    if (this.secret) headers['x-tributary-signature'] = signBody(this.secret, body);
    const response = await fetch(this.url, {
      method: 'POST',
      headers,
      body,
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    if (!response.ok) {
      throw new Error(
        `gateway reply endpoint answered ${response.status}; the reply will be retried with the batch`,
      );
    }
  }
}
