import { describe, expect, it } from 'vitest';
import { splitMessages } from '../src/sender-context.js';
import { senderContext, text } from './blocks.js';

const image = { type: 'image', data: 'AAAA', mimeType: 'image/png' } as const;

describe('splitMessages', () => {
  it('gives each block to the nearest preceding sender_context', () => {
    const messages = splitMessages([
      senderContext({ sender_id: 'U1' }),
      text('check the build'),
      image,
      senderContext({ sender_id: 'U2' }),
      text('actually wait'),
    ]);
    expect(messages).toEqual([
      { sender: { schema: 'openab.sender.v1', sender_id: 'U1' }, blocks: [text('check the build'), image] },
      { sender: { schema: 'openab.sender.v1', sender_id: 'U2' }, blocks: [text('actually wait')] },
    ]);
  });

  it('keeps blocks before any envelope as a message without sender', () => {
    expect(splitMessages([text('raw prompt')])).toEqual([
      { sender: undefined, blocks: [text('raw prompt')] },
    ]);
  });

  it('treats a malformed or trailing-newline envelope as ordinary text', () => {
    const malformed = text('<sender_context>\n{not json}\n</sender_context>');
    const trailing = text('<sender_context>\n{}\n</sender_context>\n');
    expect(splitMessages([malformed, trailing])).toEqual([
      { sender: undefined, blocks: [malformed, trailing] },
    ]);
  });

  it('keeps an event without blocks (empty prompt) as its own message', () => {
    expect(
      splitMessages([senderContext({ sender_id: 'U1' }), senderContext({ sender_id: 'U1' })]),
    ).toHaveLength(2);
  });
});
