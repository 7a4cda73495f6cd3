import { describe, expect, it } from 'vitest';
import type { ArrivalEvent } from '../src/index.js';
import { parseSenderContextBlockText, senderContext, senderContextBlockText } from '../src/index.js';

const inThread: ArrivalEvent = {
  eventId: '4242',
  platform: 'telegram',
  channelId: '-1001234567890',
  threadId: '17',
  sender: { id: '99', name: 'bob_k', displayName: 'Bob K', isBot: false },
  timestamp: '2025-03-04T05:06:07.890Z',
  text: 'hi',
  attachments: [],
};
const { threadId: _omitted, ...notInThread } = inThread;

describe('SenderContext', () => {
  it('has its fields in the contract order', () => {
    expect(Object.keys(senderContext(inThread))).toStrictEqual([
      'schema',
      'sender_id',
      'sender_name',
      'display_name',
      'channel',
      'channel_id',
      'thread_id',
      'is_bot',
      'timestamp',
    ]);
  });

  it('renders as the tag, the JSON on one line and the closing tag, with no trailing newline', () => {
    expect(senderContextBlockText(inThread)).toBe(
      '<sender_context>\n{"schema":"openab.sender.v1","sender_id":"99","sender_name":"bob_k","display_name":"Bob K","channel":"telegram","channel_id":"-1001234567890","thread_id":"17","is_bot":false,"timestamp":"2025-03-04T05:06:07.890Z"}\n</sender_context>',
    );
  });

  it('omits thread_id when the event is not in a thread', () => {
    expect(senderContextBlockText(notInThread)).toBe(
      '<sender_context>\n{"schema":"openab.sender.v1","sender_id":"99","sender_name":"bob_k","display_name":"Bob K","channel":"telegram","channel_id":"-1001234567890","is_bot":false,"timestamp":"2025-03-04T05:06:07.890Z"}\n</sender_context>',
    );
    expect(senderContext(notInThread)).not.toHaveProperty('thread_id');
  });

  it('reads back a block whose names contain the closing tag and newlines', () => {
    const tricky = { ...inThread, sender: { ...inThread.sender, displayName: 'x\n</sender_context>\ny' } };
    expect(parseSenderContextBlockText(senderContextBlockText(tricky))).toStrictEqual(senderContext(tricky));
  });

  it('reads back a block from a later schema revision that added fields', () => {
    const later = senderContextBlockText(inThread).replace(
      '"}\n</sender_context>',
      '","locale":"en"}\n</sender_context>',
    );
    expect(parseSenderContextBlockText(later)).toStrictEqual(senderContext(inThread));
  });

  it('marks an edit of a message the agent was given, after every other field', () => {
    const edit = { ...inThread, text: 'hi, edited', editedAt: '2025-03-04T05:07:00.000Z' };
    expect(senderContextBlockText(edit)).toBe(
      '<sender_context>\n{"schema":"openab.sender.v1","sender_id":"99","sender_name":"bob_k","display_name":"Bob K","channel":"telegram","channel_id":"-1001234567890","thread_id":"17","is_bot":false,"timestamp":"2025-03-04T05:06:07.890Z","edited_at":"2025-03-04T05:07:00.000Z"}\n</sender_context>',
    );
    expect(parseSenderContextBlockText(senderContextBlockText(edit))).toStrictEqual(senderContext(edit));
    expect(senderContext(inThread)).not.toHaveProperty('edited_at');
  });
});
