import type { ContentBlock } from '@agentclientprotocol/sdk';
import type { Attachment } from './arrival-event.js';
import { attachmentNameFromUri } from './attachment-uri.js';
import { META_MIME_TYPE, META_NAME, META_PART, META_URI, type Part } from './block-meta.js';
import { parseSenderContextBlockText, type SenderContext } from './sender-context.js';

/** One event as the agent received it. */
export interface UnpackedEvent {
  sender: SenderContext;
  /** '' when the event had no prompt text. */
  prompt: string;
  /**
   * In block order: text attachments, then the others, each group in arrival order. Media the agent
   * could not take come back as the links it received instead.
   */
  attachments: Attachment[];
}

type Meta = ContentBlock['_meta'];

/** Where in its event a block stands: text attachments, then the prompt, then the other attachments. */
type Stage = 'text attachment' | 'prompt' | 'other attachment';
const RANK: Record<Stage, number> = { 'text attachment': 0, prompt: 1, 'other attachment': 2 };

interface OpenEvent {
  event: UnpackedEvent;
  stage: Stage;
}

/**
 * The inverse of packBatch: splits a prompt at its <sender_context> blocks. Throws, naming the block,
 * on anything packBatch does not produce, such as a block before the first boundary.
 */
export function unpackBatch(blocks: readonly ContentBlock[]): UnpackedEvent[] {
  const events: UnpackedEvent[] = [];
  let open: OpenEvent | undefined;
  blocks.forEach((block, index) => {
    try {
      if (part(block._meta) === 'sender_context') {
        open = { event: { sender: senderOf(block), prompt: '', attachments: [] }, stage: 'text attachment' };
        events.push(open.event);
        return;
      }
      if (open === undefined) throw new Error('comes before any <sender_context> block');
      place(open, block);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(`block ${index} (${block.type}): ${reason}`, { cause: error });
    }
  });
  return events;
}

function senderOf(block: ContentBlock): SenderContext {
  if (block.type !== 'text') throw new Error('a sender_context part must be a text block');
  return parseSenderContextBlockText(block.text);
}

function place(open: OpenEvent, block: ContentBlock): void {
  switch (block.type) {
    case 'text':
      if (part(block._meta) === 'attachment') {
        advance(open, 'text attachment');
        open.event.attachments.push({
          kind: 'text',
          name: attachmentNameFromUri(requiredMeta(block._meta, META_URI)),
          mimeType: requiredMeta(block._meta, META_MIME_TYPE),
          text: block.text,
        });
        return;
      }
      advance(open, 'prompt');
      open.event.prompt = block.text;
      return;
    case 'resource': {
      const { resource } = block;
      if (!('text' in resource)) throw new Error('a binary resource is not something packBatch produces');
      if (resource.mimeType == null) throw new Error('a text attachment needs its mimeType');
      advance(open, 'text attachment');
      open.event.attachments.push({
        kind: 'text',
        name: attachmentNameFromUri(resource.uri),
        mimeType: resource.mimeType,
        text: resource.text,
      });
      return;
    }
    case 'image':
      advance(open, 'other attachment');
      open.event.attachments.push({
        kind: 'image',
        mimeType: block.mimeType,
        data: block.data,
        ...(block.uri == null ? {} : { uri: block.uri }),
        ...optionalMeta(block._meta, META_NAME, 'name'),
      });
      return;
    case 'audio':
      advance(open, 'other attachment');
      open.event.attachments.push({
        kind: 'audio',
        mimeType: block.mimeType,
        data: block.data,
        ...optionalMeta(block._meta, META_URI, 'uri'),
        ...optionalMeta(block._meta, META_NAME, 'name'),
      });
      return;
    case 'resource_link':
      advance(open, 'other attachment');
      open.event.attachments.push({
        kind: 'link',
        uri: block.uri,
        name: block.name,
        ...(block.mimeType == null ? {} : { mimeType: block.mimeType }),
        ...(block.description == null ? {} : { notice: block.description }),
      });
      return;
  }
}

/** Blocks of an event never step back a stage, and there is at most one prompt. */
function advance(open: OpenEvent, to: Stage): void {
  const allowed = RANK[to] > RANK[open.stage] || (to === open.stage && to !== 'prompt');
  if (!allowed) throw new Error(`out of order: a ${to} block cannot follow a ${open.stage} block`);
  open.stage = to;
}

function part(meta: Meta): Part | undefined {
  const value = meta?.[META_PART];
  if (value === undefined || value === 'sender_context' || value === 'attachment') return value;
  throw new Error(`unknown ${META_PART}: ${JSON.stringify(value)}`);
}

function requiredMeta(meta: Meta, key: string): string {
  const value = meta?.[key];
  if (typeof value !== 'string') throw new Error(`_meta['${key}'] must be a string`);
  return value;
}

function optionalMeta<K extends string>(meta: Meta, key: string, as: K): { [P in K]?: string } {
  return meta?.[key] === undefined ? {} : ({ [as]: requiredMeta(meta, key) } as { [P in K]?: string });
}
