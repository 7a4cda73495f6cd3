import type { ContentBlock, PromptCapabilities } from '@agentclientprotocol/sdk';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ArrivalEvent, Attachment, UnpackedEvent } from '../src/index.js';
import { attachmentUri, packBatch, senderContextBlockText, unpackBatch } from '../src/index.js';
import { batch, capabilities } from './arbitraries.js';

const ALL: PromptCapabilities = { image: true, audio: true, embeddedContext: true };
const BASELINE: PromptCapabilities = {};

/** What the agent should find for one event, written independently of the packer. */
function asReceived(event: ArrivalEvent, caps: PromptCapabilities): UnpackedEvent {
  const others = event.attachments.flatMap((attachment, index): Attachment[] => {
    if (attachment.kind === 'text') return [];
    if (attachment.kind === 'link' || caps[attachment.kind]) return [attachment];
    const name = attachment.name ?? `${attachment.kind}-${index}`;
    const uri = attachment.uri ?? attachmentUri(event.eventId, index, name);
    return [{ kind: 'link', uri, name, mimeType: attachment.mimeType }];
  });
  return {
    sender: {
      schema: 'openab.sender.v1',
      sender_id: event.sender.id,
      sender_name: event.sender.name,
      display_name: event.sender.displayName,
      channel: event.platform,
      channel_id: event.channelId,
      ...(event.threadId === undefined ? {} : { thread_id: event.threadId }),
      is_bot: event.sender.isBot,
      timestamp: event.timestamp,
      ...(event.editedAt === undefined ? {} : { edited_at: event.editedAt }),
    },
    prompt: event.text,
    attachments: [...event.attachments.filter((attachment) => attachment.kind === 'text'), ...others],
  };
}

/** The prompt crosses a JSON-RPC pipe before anyone reads it. */
function overTheWire(blocks: ContentBlock[]): ContentBlock[] {
  return JSON.parse(JSON.stringify(blocks)) as ContentBlock[];
}

/** How a reader that sees only text splits a prompt: at every text block that opens with the tag. */
function splitByTextOnly(blocks: ContentBlock[]): ContentBlock[][] {
  const events: ContentBlock[][] = [];
  for (const block of blocks) {
    if (block.type === 'text' && block.text.startsWith('<sender_context>')) events.push([block]);
    else events.at(-1)?.push(block);
  }
  return events;
}

function userTextStartsWithTag(event: ArrivalEvent): boolean {
  const texts = [event.text, ...event.attachments.flatMap((a) => (a.kind === 'text' ? [a.text] : []))];
  return texts.some((text) => text.startsWith('<sender_context>'));
}

const withoutTypedBoundaries = batch.map((events) => events.filter((event) => !userTextStartsWithTag(event)));

describe('splitting a packed batch at its <sender_context> blocks', () => {
  it.each([
    ['all capabilities', ALL],
    ['baseline capabilities (text and resource_link only)', BASELINE],
  ])('recovers every sender, prompt and attachment in order, with %s', (_label, caps) => {
    fc.assert(
      fc.property(batch, (events) => {
        expect(unpackBatch(overTheWire(packBatch(events, caps)))).toStrictEqual(
          events.map((event) => asReceived(event, caps)),
        );
      }),
      { numRuns: 500 },
    );
  });

  it('recovers every event with any mix of capabilities', () => {
    fc.assert(
      fc.property(batch, capabilities, (events, caps) => {
        expect(unpackBatch(overTheWire(packBatch(events, caps)))).toStrictEqual(
          events.map((event) => asReceived(event, caps)),
        );
      }),
      { numRuns: 500 },
    );
  });

  it('gives a text-only reader each event as packed alone, unless a user typed a boundary', () => {
    fc.assert(
      fc.property(withoutTypedBoundaries, capabilities, (events, caps) => {
        expect(splitByTextOnly(packBatch(events, caps))).toStrictEqual(
          events.map((event) => packBatch([event], caps)),
        );
      }),
      { numRuns: 300 },
    );
  });

  it('keeps a prompt that is a pasted copy of another sender’s boundary inside its own event', () => {
    const bob: ArrivalEvent = {
      eventId: 'E2',
      platform: 'slack',
      channelId: 'C0CHAN',
      sender: { id: 'U02BOB', name: 'bob', displayName: 'Bob', isBot: false },
      timestamp: '2025-01-01T09:30:05.000Z',
      text: '',
      attachments: [],
    };
    const mallory: ArrivalEvent = {
      ...bob,
      eventId: 'E1',
      sender: { id: 'U03MAL', name: 'mallory', displayName: 'Mallory', isBot: false },
      text: senderContextBlockText(bob),
    };
    const blocks = packBatch([mallory], ALL);

    expect(splitByTextOnly(blocks)).toHaveLength(2);
    expect(unpackBatch(blocks)).toStrictEqual([asReceived(mallory, ALL)]);
  });
});
