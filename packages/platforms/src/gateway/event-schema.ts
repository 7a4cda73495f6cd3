import { InvalidWebhookError } from '../inbound.js';
import { compact, JsonFields } from '../json-body.js';

export const GATEWAY_EVENT_SCHEMA = 'openab.gateway.event.v1';

/**
 * One event from an openab-compatible gateway, snake_case as on the wire (docs/adr/0008). Fields the
 * broker does not know (such as `proactive`) are tolerated and dropped: the protocol may add fields.
 */
export interface GatewayEvent {
  schema: typeof GATEWAY_EVENT_SCHEMA;
  /** Minted afresh for every delivery: a reply names it, dedup must not. */
  event_id: string;
  /** RFC 3339, any offset. */
  timestamp: string;
  /** The upstream platform: 'telegram', 'line', 'native', ... */
  platform: string;
  /** Only 'message' is parsed past this field; other types are ignored. */
  event_type: string;
  channel: { id: string; type: string; thread_id?: string };
  sender: { id: string; name: string; display_name: string; is_bot: boolean };
  content: { type: string; text: string; attachments?: GatewayAttachment[] };
  /** Upstream user ids the message mentions; the text writes a mention as `<@id>`. */
  mentions?: string[];
  /** The upstream platform's message id: the same message delivered again carries the same one. */
  message_id: string;
}

export interface GatewayAttachment {
  /** 'image' | 'text_file' | 'audio'; a type added later passes by reference. */
  type: string;
  filename: string;
  mime_type: string;
  /** Base64 of the file; absent or empty when the gateway did not inline it. */
  data?: string;
  size: number;
  /** Where the gateway serves the file over HTTP; a worker downloads it from GATEWAY_FILES_URL's origin only. */
  url?: string;
  /** Where the gateway stored the file; only reachable on a filesystem shared with it. */
  path?: string;
  /** Present when the file was not delivered: the gateway's human-readable reason. */
  status?: string;
}

/**
 * The event's type, after checking the schema: a type other than 'message' may not carry the message
 * fields at all, so it is read before them.
 */
export function gatewayEventType(value: unknown): string {
  const event = JsonFields.of(value, '');
  if (event.string('schema') !== GATEWAY_EVENT_SCHEMA) {
    throw new InvalidWebhookError(`schema must be ${GATEWAY_EVENT_SCHEMA}`);
  }
  return event.nonEmptyString('event_type');
}

/**
 * Checks the shape of an untrusted gateway message event and returns a fresh copy holding only the
 * known fields; throws InvalidWebhookError naming the first bad field. Formats inside the fields (MIME
 * types, base64, times) are checked when the event becomes an ArrivalEvent.
 */
export function parseGatewayEvent(value: unknown): GatewayEvent {
  const eventType = gatewayEventType(value);
  if (eventType !== 'message')
    throw new InvalidWebhookError(`event_type must be 'message', got '${eventType}'`);
  const event = JsonFields.of(value, '');
  const channel = event.object('channel');
  const sender = event.object('sender');
  const content = event.object('content');
  return compact({
    schema: GATEWAY_EVENT_SCHEMA,
    event_id: event.nonEmptyString('event_id'),
    timestamp: event.string('timestamp'),
    platform: event.nonEmptyString('platform'),
    event_type: eventType,
    channel: compact({
      id: channel.nonEmptyString('id'),
      type: channel.string('type'),
      thread_id: channel.has('thread_id') ? channel.nonEmptyString('thread_id') : undefined,
    }),
    sender: {
      id: sender.nonEmptyString('id'),
      name: sender.string('name'),
      display_name: sender.string('display_name'),
      is_bot: sender.boolean('is_bot'),
    },
    content: compact({
      type: content.string('type'),
      text: content.string('text'),
      attachments: content.has('attachments')
        ? content.objects('attachments').map(parseAttachment)
        : undefined,
    }),
    mentions: event.has('mentions') ? event.strings('mentions') : undefined,
    message_id: event.nonEmptyString('message_id'),
  });
}

function parseAttachment(attachment: JsonFields): GatewayAttachment {
  return compact({
    type: attachment.string('type'),
    filename: attachment.string('filename'),
    mime_type: attachment.string('mime_type'),
    data: attachment.optionalString('data'),
    size: attachment.integer('size'),
    url: attachment.optionalString('url'),
    path: attachment.optionalString('path'),
    status: attachment.optionalString('status'),
  });
}
