import type { ContentBlock } from '@agentclientprotocol/sdk';
import { describe, expect, it } from 'vitest';
import type { ArrivalEvent } from '../src/index.js';
import { packBatch, unpackBatch } from '../src/index.js';

const event: ArrivalEvent = {
  eventId: 'E1',
  platform: 'gateway',
  channelId: 'room-1',
  sender: { id: 'u1', name: 'ann', displayName: 'Ann', isBot: false },
  timestamp: '2025-01-01T00:00:00Z',
  text: 'hello',
  attachments: [],
};
const [boundary, prompt] = packBatch([event], {}) as [ContentBlock, ContentBlock];
const image: ContentBlock = { type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' };

describe('unpackBatch on blocks packBatch does not produce', () => {
  it('rejects a block before the first boundary', () => {
    expect(() => unpackBatch([prompt, boundary, prompt])).toThrow(/^block 0 \(text\): comes before any/);
  });

  it('rejects a second prompt in one event', () => {
    expect(() => unpackBatch([boundary, prompt, prompt])).toThrow(/^block 2 \(text\): out of order/);
  });

  it('rejects a prompt after the event’s images', () => {
    expect(() => unpackBatch([boundary, image, prompt])).toThrow(/^block 2 \(text\): out of order/);
  });

  it('rejects a marked boundary whose text is not a sender context', () => {
    const fake: ContentBlock = { type: 'text', text: 'hi', _meta: { 'tributary/part': 'sender_context' } };
    expect(() => unpackBatch([fake])).toThrow(/^block 0 \(text\): not a <sender_context> block/);
  });

  it('takes an empty prompt list as no events', () => {
    expect(unpackBatch([])).toStrictEqual([]);
  });
});
