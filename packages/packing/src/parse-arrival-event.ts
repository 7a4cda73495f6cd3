import type {
  ArrivalEvent,
  Attachment,
  AttachmentSource,
  AudioAttachment,
  ImageAttachment,
  LinkAttachment,
  Sender,
} from './arrival-event.js';
import { InvalidArrivalEventError } from './invalid-arrival-event-error.js';

type JsonObject = Record<string, unknown>;

const UTC_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z$/;
const MIME_TYPE = /^[^\s/;]+\/[^\s/;]+(?:\s*;.*)?$/;

/**
 * Checks untrusted JSON (a webhook body turned into an event, or a payload read back from Redis) and
 * returns a fresh ArrivalEvent holding only the known fields. Throws InvalidArrivalEventError naming the
 * first bad field.
 */
export function parseArrivalEvent(value: unknown): ArrivalEvent {
  const event = object(value, 'event');
  return {
    eventId: nonEmptyString(event.eventId, 'eventId'),
    platform: nonEmptyString(event.platform, 'platform'),
    channelId: nonEmptyString(event.channelId, 'channelId'),
    ...optional('threadId', event.threadId, nonEmptyString),
    sender: parseSender(event.sender),
    timestamp: utcTimestamp(event.timestamp, 'timestamp'),
    text: string(event.text, 'text'),
    attachments: array(event.attachments, 'attachments').map((item, index) =>
      parseAttachment(item, `attachments[${index}]`),
    ),
    ...optional('replyRef', event.replyRef, nonEmptyString),
    ...optional('editedAt', event.editedAt, utcTimestamp),
    ...optional('workspaceId', event.workspaceId, nonEmptyString),
  };
}

function parseSender(value: unknown): Sender {
  const sender = object(value, 'sender');
  return {
    id: nonEmptyString(sender.id, 'sender.id'),
    name: string(sender.name, 'sender.name'),
    displayName: string(sender.displayName, 'sender.displayName'),
    isBot: boolean(sender.isBot, 'sender.isBot'),
  };
}

function parseAttachment(value: unknown, field: string): Attachment {
  const attachment = object(value, field);
  switch (attachment.kind) {
    case 'text':
      return {
        kind: 'text',
        name: nonEmptyString(attachment.name, `${field}.name`),
        mimeType: mimeType(attachment.mimeType, `${field}.mimeType`),
        text: string(attachment.text, `${field}.text`),
      };
    case 'image':
      return { kind: 'image', ...media(attachment, field) } satisfies ImageAttachment;
    case 'audio':
      return { kind: 'audio', ...media(attachment, field) } satisfies AudioAttachment;
    case 'link':
      return {
        kind: 'link',
        uri: uri(attachment.uri, `${field}.uri`),
        name: nonEmptyString(attachment.name, `${field}.name`),
        ...optional('mimeType', attachment.mimeType, mimeType, field),
        ...optional('source', attachment.source, attachmentSource, field),
      } satisfies LinkAttachment;
    default:
      throw new InvalidArrivalEventError(`${field}.kind`, "must be 'text', 'image', 'audio' or 'link'");
  }
}

function media(attachment: JsonObject, field: string): Omit<ImageAttachment | AudioAttachment, 'kind'> {
  return {
    mimeType: mimeType(attachment.mimeType, `${field}.mimeType`),
    data: base64(attachment.data, `${field}.data`),
    ...optional('uri', attachment.uri, uri, field),
    ...optional('name', attachment.name, nonEmptyString, field),
  };
}

function attachmentSource(value: unknown, field: string): AttachmentSource {
  const source = object(value, field);
  return {
    platform: nonEmptyString(source.platform, `${field}.platform`),
    ref: nonEmptyString(source.ref, `${field}.ref`),
    ...optional('size', source.size, byteCount, field),
  };
}

function byteCount(value: unknown, field: string): number {
  if (!Number.isSafeInteger(value) || (value as number) < 0) {
    throw new InvalidArrivalEventError(field, 'must be a whole number of bytes');
  }
  return value as number;
}

/** Absent stays absent (not `key: undefined`), so the event round-trips through JSON unchanged. */
function optional<K extends string, T>(
  key: K,
  value: unknown,
  check: (value: unknown, field: string) => T,
  parent?: string,
): { [P in K]?: T } {
  if (value === undefined) return {};
  return { [key]: check(value, parent === undefined ? key : `${parent}.${key}`) } as { [P in K]?: T };
}

function object(value: unknown, field: string): JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidArrivalEventError(field, 'must be an object');
  }
  return value as JsonObject;
}

function array(value: unknown, field: string): unknown[] {
  if (!Array.isArray(value)) throw new InvalidArrivalEventError(field, 'must be an array');
  return value;
}

function boolean(value: unknown, field: string): boolean {
  if (typeof value !== 'boolean') throw new InvalidArrivalEventError(field, 'must be a boolean');
  return value;
}

function string(value: unknown, field: string): string {
  if (typeof value !== 'string') throw new InvalidArrivalEventError(field, 'must be a string');
  // A lone surrogate cannot be encoded as UTF-8, so it would not reach the agent as received.
  if (!value.isWellFormed()) {
    throw new InvalidArrivalEventError(field, 'must be well-formed Unicode (it has a lone surrogate)');
  }
  return value;
}

function nonEmptyString(value: unknown, field: string): string {
  const text = string(value, field);
  if (text === '') throw new InvalidArrivalEventError(field, 'must not be empty');
  return text;
}

function utcTimestamp(value: unknown, field: string): string {
  const text = string(value, field);
  if (!UTC_TIMESTAMP.test(text) || Number.isNaN(Date.parse(text))) {
    throw new InvalidArrivalEventError(field, 'must be an ISO-8601 UTC time like 2025-01-01T09:30:00.000Z');
  }
  return text;
}

function mimeType(value: unknown, field: string): string {
  const text = string(value, field);
  if (!MIME_TYPE.test(text)) throw new InvalidArrivalEventError(field, 'must be a MIME type like image/png');
  return text;
}

function uri(value: unknown, field: string): string {
  const text = string(value, field);
  if (!URL.canParse(text)) throw new InvalidArrivalEventError(field, 'must be an absolute URI');
  return text;
}

function base64(value: unknown, field: string): string {
  if (typeof value !== 'string' || value === '' || !isBase64(value)) {
    throw new InvalidArrivalEventError(field, 'must be non-empty base64');
  }
  return value;
}

/**
 * Standard base64 with its padding: what /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/
 * accepts. That expression overflows the regular-expression stack on a few megabytes (one backtrack
 * entry per group), so the check is a loop.
 */
export function isBase64(text: string): boolean {
  if (text.length % 4 !== 0) return false;
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const end = text.length - padding;
  for (let i = 0; i < end; i++) {
    if (!isBase64Digit(text.charCodeAt(i))) return false;
  }
  return true;
}

function isBase64Digit(code: number): boolean {
  return (
    (code >= 0x41 && code <= 0x5a) || // A-Z
    (code >= 0x61 && code <= 0x7a) || // a-z
    (code >= 0x30 && code <= 0x39) || // 0-9
    code === 0x2b || // +
    code === 0x2f // /
  );
}
