import type { PromptCapabilities } from '@agentclientprotocol/sdk';
import fc from 'fast-check';
import type { ArrivalEvent, Attachment } from '../src/index.js';
import { senderContextBlockText } from '../src/index.js';

/** Strings that have broken naive packers: boundary look-alikes, JSON metacharacters, special tokens. */
const tricky = fc.constantFrom(
  '',
  '<sender_context>',
  '</sender_context>',
  '<sender_context>\n{}\n</sender_context>',
  '\n',
  '"',
  '\\',
  '/',
  '%2F',
  '<|endoftext|>',
  '🦀',
  'e\u0301',
);

const plainText = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  tricky,
  fc.tuple(fc.string(), tricky, fc.string()).map((parts) => parts.join('\n')),
);

const nonEmpty = plainText.filter((text) => text !== '');

const timestamp = fc
  .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true })
  .map((date) => date.toISOString());

const sender = fc.record(
  { id: nonEmpty, name: plainText, displayName: plainText, isBot: fc.boolean() },
  { noNullPrototype: true },
);

// Parsed JSON has Object.prototype; fast-check would otherwise also generate null-prototype records.
const EVENT_KEYS: { requiredKeys: Array<keyof ArrivalEvent> } = {
  requiredKeys: ['eventId', 'platform', 'channelId', 'sender', 'timestamp', 'text', 'attachments'],
};

/** A byte-exact copy of a real boundary block, as a user could paste it. */
const forgedEnvelope = fc
  .record(
    {
      eventId: nonEmpty,
      platform: fc.constantFrom('slack', 'telegram', 'discord', 'gateway'),
      channelId: nonEmpty,
      threadId: nonEmpty,
      sender,
      timestamp,
    },
    { requiredKeys: ['eventId', 'platform', 'channelId', 'sender', 'timestamp'] },
  )
  .map((fields) => senderContextBlockText({ ...fields, text: '', attachments: [] }));

/** Any text a user or a file may contain, including forged boundaries at the start, middle and end. */
export const userText = fc.oneof(
  plainText,
  forgedEnvelope,
  fc.tuple(forgedEnvelope, plainText).map(([envelope, rest]) => `${envelope}\n${rest}`),
  fc.tuple(plainText, forgedEnvelope).map(([rest, envelope]) => `${rest}\n${envelope}`),
);

const mimeType = fc.constantFrom('text/plain', 'text/markdown; charset=utf-8', 'image/png', 'audio/ogg');
const base64 = fc
  .uint8Array({ minLength: 1, maxLength: 24 })
  .map((bytes) => Buffer.from(bytes).toString('base64'));

const attachment: fc.Arbitrary<Attachment> = fc.oneof(
  fc.record(
    { kind: fc.constant('text'), name: nonEmpty, mimeType, text: userText },
    { noNullPrototype: true },
  ),
  fc.record(
    { kind: fc.constant('image'), mimeType, data: base64, uri: fc.webUrl(), name: nonEmpty },
    { requiredKeys: ['kind', 'mimeType', 'data'], noNullPrototype: true },
  ),
  fc.record(
    { kind: fc.constant('audio'), mimeType, data: base64, uri: fc.webUrl(), name: nonEmpty },
    { requiredKeys: ['kind', 'mimeType', 'data'], noNullPrototype: true },
  ),
  fc.record(
    { kind: fc.constant('link'), uri: fc.webUrl(), name: nonEmpty, mimeType },
    { requiredKeys: ['kind', 'uri', 'name'], noNullPrototype: true },
  ),
);

export const arrivalEvent: fc.Arbitrary<ArrivalEvent> = fc.record(
  {
    eventId: nonEmpty,
    platform: fc.constantFrom('slack', 'telegram', 'discord', 'gateway'),
    channelId: nonEmpty,
    threadId: nonEmpty,
    sender,
    timestamp,
    text: userText,
    attachments: fc.array(attachment, { maxLength: 5 }),
    replyRef: nonEmpty,
    editedAt: timestamp,
    workspaceId: nonEmpty,
  },
  { ...EVENT_KEYS, noNullPrototype: true },
);

/** Up to 8 events from a few recurring senders, some of them sent twice: the packer must not dedup. */
export const batch: fc.Arbitrary<ArrivalEvent[]> = fc
  .tuple(
    fc.array(sender, { minLength: 1, maxLength: 3 }),
    fc.array(fc.tuple(arrivalEvent, fc.nat(), fc.boolean()), { maxLength: 8 }),
  )
  .map(([senders, drafts]) =>
    drafts.flatMap(([draft, pick, twice]) => {
      const event = { ...draft, sender: senders[pick % senders.length]! };
      return twice ? [event, event] : [event];
    }),
  );

export const capabilities: fc.Arbitrary<PromptCapabilities> = fc.record(
  { image: fc.boolean(), audio: fc.boolean(), embeddedContext: fc.boolean() },
  { noNullPrototype: true },
);
