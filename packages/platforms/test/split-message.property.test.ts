import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitMessage } from '../src/split-message.js';

/** Text shaped like agent replies: words, line ends, blank lines, fences, emoji, long tokens, odd code points. */
const chunk = fc.oneof(
  fc.constantFrom(
    'word',
    'a',
    ' ',
    '  ',
    '\n',
    '\n\n',
    '\t',
    '😀',
    '👨‍💻',
    '```',
    '```ts\n',
    '\n```\n',
    'x'.repeat(25),
  ),
  fc.string({ unit: 'binary', maxLength: 6 }),
);
const text = fc.array(chunk, { maxLength: 120 }).map((chunks) => chunks.join(''));
const limit = fc.integer({ min: 16, max: 120 });

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * text = p0 w1 p1 … wn pn w with whitespace-only w, where pi is part i or part i without the fence
 * lines the splitter may add (a leading fence line after the first part, a trailing "\n```" before the last).
 */
function reconstructs(original: string, parts: string[]): boolean {
  const alternatives = parts.map((part, i) => {
    const heads = new Set([part, i > 0 ? part.replace(/^```[^\n]*\n/, '') : part]);
    const cores = new Set(heads);
    if (i < parts.length - 1)
      for (const head of heads) if (head.endsWith('\n```')) cores.add(head.slice(0, -4));
    return `(?:${[...cores].map(escapeRegExp).join('|')})`;
  });
  return new RegExp(`^${alternatives.join('\\s*')}\\s*$`).test(original);
}

const fenceLines = (part: string) => part.split('\n').filter((line) => /^ {0,3}```/.test(line)).length;

describe('splitMessage properties', () => {
  it('parts fit the limit, are never empty, and put the text back together', () => {
    fc.assert(
      fc.property(text, limit, (original, max) => {
        const parts = splitMessage(original, max);
        expect(parts.every((part) => part.length <= max)).toBe(true);
        if (original !== '') expect(parts.every((part) => part.length > 0)).toBe(true);
        expect(reconstructs(original, parts)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('leaves the last part as the text leaves it when only whitespace follows the cut', () => {
    // Found by the property above: the part was closed with a fence the text never had.
    expect(splitMessage('𐀀𐀀𐀀\n```\n  \n\n  ', 16)).toEqual(['𐀀𐀀𐀀\n```']);
  });

  it('never splits a surrogate pair', () => {
    fc.assert(
      fc.property(text, limit, (original, max) => {
        fc.pre(original.isWellFormed());
        expect(splitMessage(original, max).every((part) => part.isWellFormed())).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('keeps every part but the last with balanced fences', () => {
    fc.assert(
      fc.property(text, limit, (original, max) => {
        const parts = splitMessage(original, max);
        for (const part of parts.slice(0, -1)) expect(fenceLines(part) % 2).toBe(0);
      }),
      { numRuns: 1000 },
    );
  });

  it('is the identity for texts that fit', () => {
    fc.assert(
      fc.property(text, limit, (original, max) => {
        fc.pre(original.length <= max);
        expect(splitMessage(original, max)).toEqual([original]);
      }),
    );
  });
});
