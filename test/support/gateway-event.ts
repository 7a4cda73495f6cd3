import { GATEWAY_EVENT_SCHEMA, type GatewayAttachment, type GatewayEvent } from '@tributary/platforms';

/** What a test says of one gateway message; the rest is a fixed upstream LINE group. */
export interface GatewayMessage {
  /** The upstream message id (the same message delivered again keeps it); the event id is `evt_<id>`. */
  id: string;
  /** channel.thread_id: the thread key is `gateway:line:<channel>:<thread>`. */
  thread: string;
  text: string;
  channel?: string;
  /** Sender id, name and display name alike. */
  sender?: string;
  attachments?: GatewayAttachment[];
}

/** The JSON body of an `openab.gateway.event.v1` carrying `message`, timestamped now. */
export function gatewayEventBody(message: GatewayMessage): string {
  const sender = message.sender ?? 'ada';
  const event: GatewayEvent = {
    schema: GATEWAY_EVENT_SCHEMA,
    event_id: `evt_${message.id}`,
    timestamp: new Date().toISOString(),
    platform: 'line',
    event_type: 'message',
    channel: { id: message.channel ?? 'room', type: 'group', thread_id: message.thread },
    sender: { id: sender, name: sender, display_name: sender, is_bot: false },
    content: {
      type: 'text',
      text: message.text,
      ...(message.attachments ? { attachments: message.attachments } : {}),
    },
    mentions: [],
    message_id: message.id,
  };
  return JSON.stringify(event);
}
