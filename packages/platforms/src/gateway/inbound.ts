import type { Attachment } from '@tributary/packing';
import { readApprovalButton } from '../approval-buttons.js';
import {
  type Inbound,
  type InboundAdapter,
  InvalidWebhookError,
  type Verification,
  type WebhookRequest,
} from '../inbound.js';
import { ignored, messageInbound } from '../inbound-message.js';
import { JsonFields, parseJsonBody } from '../json-body.js';
import { isoFromRfc3339 } from '../platform-time.js';
import { escapeRegExp, stripMention } from '../strip-mention.js';
import { requireSecret, verifyTributarySignature } from '../webhook-checks.js';
import {
  type GatewayAttachment,
  type GatewayEvent,
  gatewayEventType,
  parseGatewayEvent,
} from './event-schema.js';

// Malformed UTF-8 is not replaced: a text file the agent receives holds exactly the bytes that were sent.
const UTF8 = new TextDecoder('utf-8', { fatal: true });

export interface GatewayInboundOptions {
  /** GATEWAY_SECRET: the gateway signs each request's timestamp and body (docs/adr/0013). */
  secret: string;
}

/**
 * Events from an openab-compatible gateway (docs/adr/0008). The event's `platform` (the upstream one)
 * becomes ArrivalEvent.platform and MessageRef.platform: the agent sees where the message really came
 * from, and a reply can name it back to a gateway that bridges several platforms. The `gateway:` thread
 * key, not the platform name, tells the broker to answer through the gateway.
 * Thread key `gateway:<platform>:<channel.id>:<channel.thread_id ?? channel.id>`, dedup key
 * `gateway:<platform>:<channel.id>:<message_id>` (the gateway mints a new `event_id` per delivery, so
 * only the upstream message id is stable); each part has `%` and `:` escaped, since upstream ids may
 * contain `:` (Matrix room ids do) and two different messages must never share a key.
 */
export class GatewayInboundAdapter implements InboundAdapter {
  readonly platform = 'gateway';

  constructor(private readonly options: GatewayInboundOptions) {
    requireSecret(options.secret, 'secret');
  }

  verify(request: WebhookRequest): Verification {
    return verifyTributarySignature(this.options.secret, request);
  }

  parse(request: WebhookRequest): Inbound {
    const body = parseJsonBody(request.rawBody);
    const eventType = gatewayEventType(body);
    if (eventType === 'approval') return gatewayApproval(JsonFields.of(body, ''));
    if (eventType !== 'message') return ignored(`gateway event_type '${eventType}'`);
    return gatewayInbound(parseGatewayEvent(body));
  }

  /** `<@id>`, the form gateway events write mentions in. */
  stripSelfMention(text: string, selfId: string, selfName?: string): string {
    return stripMention(text, `<@${escapeRegExp(selfId)}>`, selfName);
  }
}

/**
 * A click on a button of a permission request (docs/platforms/gateway.md): `approval.data` as the
 * `ask_approval` reply gave it, `message_id` the request's, `sender` the clicker. What the clicker is
 * told comes back in the HTTP answer's `answer`, for the gateway to show them alone.
 */
function gatewayApproval(event: JsonFields): Inbound {
  const button = readApprovalButton(event.object('approval').string('data'));
  if (button === undefined)
    throw new InvalidWebhookError('approval.data is not the data of a request button');
  const channel = event.object('channel');
  const sender = event.object('sender');
  const threadId = channel.optionalString('thread_id');
  return {
    kind: 'approval',
    approvalId: button.id,
    option: button.option,
    userId: sender.nonEmptyString('id'),
    userName: sender.optionalString('display_name') ?? sender.string('name'),
    ref: {
      platform: event.nonEmptyString('platform'),
      channelId: channel.nonEmptyString('id'),
      ...(threadId === undefined ? {} : { threadId }),
      messageId: event.nonEmptyString('message_id'),
    },
    idempotencyKey: `gateway:approval:${event.nonEmptyString('event_id')}`,
    privately: true,
    respond: (answer) => ({ ok: true, outcome: 'approval', ...(answer === undefined ? {} : { answer }) }),
  };
}

function gatewayInbound(event: GatewayEvent): Inbound {
  const { channel } = event;
  const prefix = `gateway:${keyPart(event.platform)}:${keyPart(channel.id)}`;
  return messageInbound({
    event: {
      eventId: event.message_id,
      platform: event.platform,
      channelId: channel.id,
      threadId: channel.thread_id,
      sender: {
        id: event.sender.id,
        name: event.sender.name,
        displayName: event.sender.display_name,
        isBot: event.sender.is_bot,
      },
      timestamp: isoFromRfc3339(event.timestamp, 'timestamp'),
      text: event.content.text,
      attachments: (event.content.attachments ?? []).map(arrivalAttachment),
      replyRef: event.event_id,
    },
    thread: `${prefix}:${keyPart(channel.thread_id ?? channel.id)}`,
    idempotencyKey: `${prefix}:${keyPart(event.message_id)}`,
    mentions: event.mentions ?? [],
    ref: {
      platform: event.platform,
      channelId: channel.id,
      threadId: channel.thread_id,
      messageId: event.message_id,
      replyRef: event.event_id,
    },
    // A gateway forwards only what its own rules meant for the agent.
    direct: true,
  });
}

/**
 * Inline content becomes the matching attachment. A file the gateway did not deliver (`status`), did
 * not inline (only a `path`, which would need a filesystem shared with the gateway) or whose text is
 * not UTF-8 passes by reference: the agent learns it exists, and no broker text enters the event.
 */
function arrivalAttachment(attachment: GatewayAttachment, index: number): Attachment {
  const name = attachment.filename === '' ? `${attachment.type}-${index}` : attachment.filename;
  const data = attachment.status === undefined ? (attachment.data ?? '') : '';
  if (data !== '') {
    const { mime_type: mimeType } = attachment;
    if (attachment.type === 'image') return { kind: 'image', mimeType, data, name };
    if (attachment.type === 'audio') return { kind: 'audio', mimeType, data, name };
    const text = attachment.type === 'text_file' ? utf8Text(data, index) : undefined;
    if (text !== undefined) return { kind: 'text', name, mimeType, text };
  }
  return {
    kind: 'link',
    uri: `tributary://gateway/attachment/${encodeURIComponent(name)}`,
    name,
    ...(attachment.mime_type === '' ? {} : { mimeType: attachment.mime_type }),
    // A file the gateway serves by URL is fetched by the worker, like a platform's own file.
    ...(attachment.status === undefined && attachment.url
      ? { source: { platform: 'gateway', ref: attachment.url, size: attachment.size } }
      : {}),
  };
}

/** The file's text, or undefined when its bytes are not UTF-8. */
function utf8Text(base64: string, index: number): string | undefined {
  const bytes = Buffer.from(base64, 'base64');
  // Buffer skips what is not base64; only a canonical encoding is taken as the file the gateway sent.
  if (bytes.toString('base64') !== base64) {
    throw new InvalidWebhookError(`content.attachments[${index}].data must be base64`);
  }
  try {
    return UTF8.decode(bytes);
  } catch {
    return undefined;
  }
}

function keyPart(id: string): string {
  return id.replaceAll('%', '%25').replaceAll(':', '%3A');
}
