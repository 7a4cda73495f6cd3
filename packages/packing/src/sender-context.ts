import type { ArrivalEvent } from './arrival-event.js';

export const SENDER_CONTEXT_SCHEMA = 'openab.sender.v1';

const OPEN = '<sender_context>\n';
const CLOSE = '\n</sender_context>';

/** Who sent an event, where and when. Fields may only be added, and only at the end. */
export interface SenderContext {
  schema: typeof SENDER_CONTEXT_SCHEMA;
  sender_id: string;
  sender_name: string;
  display_name: string;
  /** The platform name. */
  channel: string;
  /** The parent channel. */
  channel_id: string;
  /** Omitted when the event is not in a thread. */
  thread_id?: string;
  is_bot: boolean;
  /** ISO-8601 UTC creation time on the platform. */
  timestamp: string;
  /**
   * Only on an edit that travels as an event of its own (see ArrivalEvent.editedAt): when it was edited. The sender and
   * `timestamp` are the original's, which is how the agent tells which earlier message it replaces.
   */
  edited_at?: string;
}

/** Property order is the wire order: JSON.stringify keeps insertion order. */
export function senderContext(event: ArrivalEvent): SenderContext {
  return {
    schema: SENDER_CONTEXT_SCHEMA,
    sender_id: event.sender.id,
    sender_name: event.sender.name,
    display_name: event.sender.displayName,
    channel: event.platform,
    channel_id: event.channelId,
    ...(event.threadId === undefined ? {} : { thread_id: event.threadId }),
    is_bot: event.sender.isBot,
    timestamp: event.timestamp,
    ...(event.editedAt === undefined ? {} : { edited_at: event.editedAt }),
  };
}

/** The boundary block that opens every event in a packed prompt. */
export function senderContextBlockText(event: ArrivalEvent): string {
  return `${OPEN}${JSON.stringify(senderContext(event))}${CLOSE}`;
}

/**
 * Reads a boundary block back. JSON.stringify never emits a raw newline, so the first and last lines are
 * the tags even when a name contains '</sender_context>'. Unknown fields are ignored: they may be added.
 */
export function parseSenderContextBlockText(text: string): SenderContext {
  if (!text.startsWith(OPEN) || !text.endsWith(CLOSE) || text.length < OPEN.length + CLOSE.length) {
    throw new Error('not a <sender_context> block: expected the tags on their own first and last lines');
  }
  const json: unknown = JSON.parse(text.slice(OPEN.length, -CLOSE.length));
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new Error('<sender_context> must hold a JSON object');
  }
  const fields = json as Record<string, unknown>;
  if (fields.schema !== SENDER_CONTEXT_SCHEMA) {
    throw new Error(`<sender_context> schema must be '${SENDER_CONTEXT_SCHEMA}'`);
  }
  const threadId = fields.thread_id;
  const editedAt = fields.edited_at;
  return {
    schema: SENDER_CONTEXT_SCHEMA,
    sender_id: stringField(fields, 'sender_id'),
    sender_name: stringField(fields, 'sender_name'),
    display_name: stringField(fields, 'display_name'),
    channel: stringField(fields, 'channel'),
    channel_id: stringField(fields, 'channel_id'),
    ...(threadId === undefined ? {} : { thread_id: stringField(fields, 'thread_id') }),
    is_bot: booleanField(fields, 'is_bot'),
    timestamp: stringField(fields, 'timestamp'),
    ...(editedAt === undefined ? {} : { edited_at: stringField(fields, 'edited_at') }),
  };
}

function stringField(fields: Record<string, unknown>, key: string): string {
  const value = fields[key];
  if (typeof value !== 'string') throw new Error(`<sender_context> ${key} must be a string`);
  return value;
}

function booleanField(fields: Record<string, unknown>, key: string): boolean {
  const value = fields[key];
  if (typeof value !== 'boolean') throw new Error(`<sender_context> ${key} must be a boolean`);
  return value;
}
