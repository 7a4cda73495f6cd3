import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ArrivalEvent } from '../src/index.js';
import { countTokens, envelopeTokens, eventTokens, NON_TEXT_BLOCK_TOKENS } from '../src/index.js';
import { arrivalEvent } from './arbitraries.js';

const event: ArrivalEvent = {
  eventId: 'C0CHAN:1735723800.000200',
  platform: 'slack',
  channelId: 'C0CHAN',
  threadId: '1735723800.000100',
  sender: { id: 'U01ALICE', name: 'alice', displayName: 'Alice Liddell', isBot: false },
  timestamp: '2025-01-01T09:30:00.000Z',
  text: 'check the build and run e2e',
  attachments: [
    { kind: 'text', name: 'build.log', mimeType: 'text/plain', text: 'error TS2345: bad argument' },
    { kind: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' },
  ],
};

describe('token counting', () => {
  it('counts BPE tokens, not characters', () => {
    expect(countTokens('hello world')).toBe(2);
    expect(countTokens('')).toBe(0);
  });

  it('counts text that spells a special token as plain text instead of throwing', () => {
    expect(countTokens('a <|endoftext|> b')).toBeGreaterThan(1);
  });

  it('gives positive, repeatable envelope and event counts', () => {
    expect(envelopeTokens(event)).toBeGreaterThan(0);
    expect(eventTokens(event)).toBeGreaterThan(0);
    expect(envelopeTokens(event)).toBe(envelopeTokens(structuredClone(event)));
    expect(eventTokens(event)).toBe(eventTokens(structuredClone(event)));
  });

  it('counts an event as its envelope, its texts and a fixed estimate per non-text attachment', () => {
    expect(eventTokens(event)).toBe(
      envelopeTokens(event) +
        countTokens('check the build and run e2e') +
        countTokens('error TS2345: bad argument') +
        NON_TEXT_BLOCK_TOKENS,
    );
  });

  it('never counts an event as less than its envelope', () => {
    const bare = { ...event, text: '', attachments: [] };
    expect(eventTokens(bare)).toBe(envelopeTokens(bare));
    fc.assert(
      fc.property(arrivalEvent, (any) => {
        expect(envelopeTokens(any)).toBeGreaterThan(0);
        expect(eventTokens(any)).toBeGreaterThanOrEqual(envelopeTokens(any));
      }),
    );
  });
});
