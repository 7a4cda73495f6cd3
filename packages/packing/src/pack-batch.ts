import type { ContentBlock, PromptCapabilities } from '@agentclientprotocol/sdk';
import type {
  ArrivalEvent,
  Attachment,
  AudioAttachment,
  ImageAttachment,
  TextAttachment,
} from './arrival-event.js';
import { attachmentUri } from './attachment-uri.js';
import { META_MIME_TYPE, META_NAME, META_PART, META_URI, type Part } from './block-meta.js';
import { senderContextBlockText } from './sender-context.js';

/**
 * Turns a batch of arrival events into one ACP prompt, the events in order, each as: its <sender_context>
 * block, its text attachments, its prompt text (omitted when empty), its other attachments. One event is
 * a batch of one. Layout and its reasons: docs/adr/0003-packing-layout.md.
 */
export function packBatch(events: readonly ArrivalEvent[], caps: PromptCapabilities): ContentBlock[] {
  return events.flatMap((event) => packEvent(event, caps));
}

function packEvent(event: ArrivalEvent, caps: PromptCapabilities): ContentBlock[] {
  const blocks: ContentBlock[] = [
    {
      type: 'text',
      text: senderContextBlockText(event),
      _meta: { [META_PART]: 'sender_context' satisfies Part },
    },
  ];
  event.attachments.forEach((attachment, index) => {
    if (attachment.kind === 'text') blocks.push(textAttachmentBlock(event.eventId, index, attachment, caps));
  });
  if (event.text !== '') blocks.push({ type: 'text', text: event.text });
  event.attachments.forEach((attachment, index) => {
    if (attachment.kind !== 'text') blocks.push(otherAttachmentBlock(event.eventId, index, attachment, caps));
  });
  return blocks;
}

/**
 * An embedded resource when the agent takes them. Otherwise a text block is the only block that carries
 * text, so the resource's uri and MIME type move to `_meta`, which tells it apart from the prompt.
 */
function textAttachmentBlock(
  eventId: string,
  index: number,
  attachment: TextAttachment,
  caps: PromptCapabilities,
): ContentBlock {
  const uri = attachmentUri(eventId, index, attachment.name);
  if (caps.embeddedContext) {
    return { type: 'resource', resource: { uri, mimeType: attachment.mimeType, text: attachment.text } };
  }
  return {
    type: 'text',
    text: attachment.text,
    _meta: {
      [META_PART]: 'attachment' satisfies Part,
      [META_URI]: uri,
      [META_MIME_TYPE]: attachment.mimeType,
    },
  };
}

function otherAttachmentBlock(
  eventId: string,
  index: number,
  attachment: Exclude<Attachment, TextAttachment>,
  caps: PromptCapabilities,
): ContentBlock {
  switch (attachment.kind) {
    case 'image':
      return caps.image ? imageBlock(attachment) : mediaLink(eventId, index, attachment);
    case 'audio':
      return caps.audio ? audioBlock(attachment) : mediaLink(eventId, index, attachment);
    case 'link':
      return {
        type: 'resource_link',
        uri: attachment.uri,
        name: attachment.name,
        ...(attachment.mimeType === undefined ? {} : { mimeType: attachment.mimeType }),
        // Only the broker writes a link's description: a user's file never fills it.
        ...(attachment.notice === undefined ? {} : { description: attachment.notice }),
      };
  }
}

function imageBlock(attachment: ImageAttachment): ContentBlock {
  return {
    type: 'image',
    mimeType: attachment.mimeType,
    data: attachment.data,
    ...(attachment.uri === undefined ? {} : { uri: attachment.uri }),
    ...metaOf({ [META_NAME]: attachment.name }),
  };
}

/** ACP audio blocks have no uri field, so both the name and the uri ride in `_meta`. */
function audioBlock(attachment: AudioAttachment): ContentBlock {
  return {
    type: 'audio',
    mimeType: attachment.mimeType,
    data: attachment.data,
    ...metaOf({ [META_NAME]: attachment.name, [META_URI]: attachment.uri }),
  };
}

/** Media the agent cannot take still reaches it, by reference, never dropped. */
function mediaLink(
  eventId: string,
  index: number,
  attachment: ImageAttachment | AudioAttachment,
): ContentBlock {
  const name = attachment.name ?? `${attachment.kind}-${index}`;
  return {
    type: 'resource_link',
    uri: attachment.uri ?? attachmentUri(eventId, index, name),
    name,
    mimeType: attachment.mimeType,
  };
}

function metaOf(entries: Record<string, string | undefined>): { _meta?: Record<string, string> } {
  const defined = Object.entries(entries).filter(
    (entry): entry is [string, string] => entry[1] !== undefined,
  );
  return defined.length === 0 ? {} : { _meta: Object.fromEntries(defined) };
}
