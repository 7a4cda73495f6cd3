import fc from 'fast-check';
import { countTokens as countO200kTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import type { ArrivalEvent } from '../src/index.js';
import {
  countTokens,
  envelopeTokens,
  eventTokens,
  NON_TEXT_BLOCK_TOKENS,
  senderContextBlockText,
} from '../src/index.js';
import { bpePieces, MAX_PIECE_CHARS, TOKEN_COUNT_BUDGET_CHARS, TokenMeter } from '../src/token-count.js';
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

  it('counts every envelope as the BPE does, though it remembers counts by shape', () => {
    const timestamp = fc
      .date({
        min: new Date('1970-01-01T00:00:00Z'),
        max: new Date('9999-12-31T23:59:59Z'),
        noInvalidDate: true,
      })
      .map((date) => date.toISOString());
    fc.assert(
      fc.property(arrivalEvent, timestamp, timestamp, (any, first, second) => {
        for (const at of [first, second]) {
          const stamped = { ...any, timestamp: at };
          expect(envelopeTokens(stamped)).toBe(countTokens(senderContextBlockText(stamped)));
        }
      }),
      { numRuns: 300 },
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

describe('token counting in linear time', () => {
  const bpe = (text: string) => countO200kTokens(text, { disallowedSpecial: new Set<string>() });
  /** Text like chat: words, blanks, line ends, punctuation, code, emoji; no run near MAX_PIECE_CHARS. */
  const chatText = fc
    .array(
      fc.oneof(
        fc.constantFrom(
          ' ',
          '  ',
          '\t',
          '\n',
          '\n\n',
          ' \n',
          '. ',
          ', ',
          "'s",
          '```',
          '<@U1>',
          '😀',
          '中文',
          'é',
        ),
        fc.string({ unit: 'grapheme', maxLength: 12 }),
        fc.stringMatching(/^[a-zA-Z0-9_]{1,40}$/),
      ),
      { maxLength: 300 },
    )
    .map((parts) => parts.join(''));

  it('counts exactly what the BPE counts for the text whole, within the budget', () => {
    fc.assert(
      fc.property(chatText, (text) => {
        expect(countTokens(text)).toBe(bpe(text));
      }),
      { numRuns: 300 },
    );
  });

  it.each([
    ['one long word', 'x'.repeat(20_000)],
    ['a run of tabs', '\t'.repeat(20_000)],
    [
      'letters without a blank',
      Array.from({ length: 20_000 }, (_, i) => 'etaoinshrdlu'[(i * 7) % 12]).join(''),
    ],
    ['punctuation', '=-'.repeat(8_000)],
  ])('stays within a percent of the whole count on %s', (_label, text) => {
    const whole = bpe(text);
    expect(Math.abs(countTokens(text) - whole) / whole).toBeLessThan(0.01);
  });

  it('hands the BPE no stretch longer than MAX_PIECE_CHARS without a pre-token start', () => {
    for (const text of [
      'x'.repeat(1 << 20),
      ' \t'.repeat(1 << 19),
      '😀'.repeat(1 << 19),
      '<@U1>'.repeat(1 << 18),
    ]) {
      const pieces = bpePieces(text);
      expect(pieces.map(([from, to]) => text.slice(from, to)).join('')).toBe(text);
      expect(Math.max(...pieces.map(([from, to]) => to - from))).toBeLessThanOrEqual(MAX_PIECE_CHARS + 1);
    }
  });

  it('does at most a budget of BPE work per meter, however large or many the texts', () => {
    const meter = new TokenMeter();
    const counts = [meter.count('x'.repeat(4 << 20)), meter.count('hello world '.repeat(100_000))];
    for (let i = 0; i < 1000; i++) counts.push(meter.count('word '.repeat(1000)));
    expect(meter.spentChars).toBeLessThanOrEqual(TOKEN_COUNT_BUDGET_CHARS);
    expect(counts.every((count) => count > 0)).toBe(true);
    expect(countTokens('x'.repeat(4 << 20))).toBe(counts[0]);
  });

  it('estimates a text beyond the budget from samples, within a few percent', () => {
    const text = Array.from(
      { length: 20_000 },
      (_, i) => `line ${i}: status=${i % 7 === 0 ? 'error' : 'ok'}\n`,
    ).join('');
    expect(text.length).toBeGreaterThan(TOKEN_COUNT_BUDGET_CHARS * 10);
    const whole = bpe(text);
    expect(Math.abs(countTokens(text) - whole) / whole).toBeLessThan(0.03);
  });

  it('keeps an event with huge attachments within one budget, counting each', () => {
    const attachments = Array.from({ length: 50 }, (_, i) => ({
      kind: 'text' as const,
      name: `f${i}.txt`,
      mimeType: 'text/plain',
      text: 'x'.repeat(100_000),
    }));
    const huge = { ...event, attachments };
    expect(eventTokens(huge)).toBeGreaterThan(50 * (100_000 / 8) * 0.9);
  });
});
