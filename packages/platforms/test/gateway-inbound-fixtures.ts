import {
  GATEWAY_EVENT_SCHEMA,
  GatewayInboundAdapter,
  signedRequestHeaders,
  type WebhookRequest,
} from '../src/index.js';
import { NOW, webhookRequest } from './support-inbound.js';

export const GATEWAY_SECRET = 'gateway-secret-for-tests';

export const gateway = new GatewayInboundAdapter({ secret: GATEWAY_SECRET });

/** An `openab.gateway.event.v1` message event; `fields` replace top-level fields. */
export function gatewayEvent(fields: Record<string, unknown> = {}) {
  return {
    schema: GATEWAY_EVENT_SCHEMA,
    event_id: 'evt_1',
    timestamp: '2025-01-01T09:30:00.000Z',
    platform: 'line',
    event_type: 'message',
    channel: { id: 'Uroom1', type: 'group' },
    sender: { id: 'Ualice', name: 'alice', display_name: 'Alice Liddell', is_bot: false },
    content: { type: 'text', text: 'check the build' },
    mentions: [],
    message_id: 'm-1',
    ...fields,
  };
}

/** The same event in thread `threadId` of channel `id` (null: not in a thread). */
export function inChannel(id: string, threadId?: string | null) {
  return { channel: { id, type: 'group', ...(threadId === undefined ? {} : { thread_id: threadId }) } };
}

/** The same event carrying these attachments. */
export function withAttachments(...attachments: Record<string, unknown>[]) {
  return { content: { type: 'text', text: 'see attached', attachments } };
}

export function signedGatewayRequest(body: unknown, secret = GATEWAY_SECRET): WebhookRequest {
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  return webhookRequest(raw, signedRequestHeaders(secret, raw, NOW));
}
