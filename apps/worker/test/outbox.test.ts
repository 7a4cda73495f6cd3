import { describe, expect, it } from 'vitest';
import { type OutboundMessage, outboundFromPayload, toOutbound } from '../src/replies/outbox.js';

const message: OutboundMessage = {
  thread: 'gateway:telegram:-1001:7',
  batchId: 'b-1',
  kind: 'reply',
  text: 'done',
  target: { platform: 'telegram', channelId: '-1001', threadId: '7', messageId: '42', replyRef: 'evt_9' },
};

describe('a reply as the outbox keeps it', () => {
  it('reads back as it was written', () => {
    expect(outboundFromPayload(toOutbound(message).payload)).toStrictEqual(message);
  });

  it('names the answered message as the previous release reads it too, for a rolling upgrade', () => {
    const stored = JSON.parse(toOutbound(message).payload) as { target: Record<string, unknown> };
    expect(stored.target.replyToEventId).toBe('42');
  });

  it('reads a reply the previous release wrote', () => {
    const { messageId: _id, ...rest } = message.target;
    const previous = JSON.stringify({ ...message, target: { ...rest, replyToEventId: '42' } });
    expect(outboundFromPayload(previous)).toStrictEqual(message);
  });
});
