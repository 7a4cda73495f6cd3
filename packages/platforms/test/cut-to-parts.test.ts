import { describe, expect, it } from 'vitest';
import { cutToParts, splitMessage } from '../src/split-message.js';

const ending = (leftOut: number) => `\n[cut: ${leftOut} left out]`;
const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(' ');

describe('cutToParts', () => {
  it('leaves a text that fits in the parts alone', () => {
    expect(cutToParts(words(10), { limit: 40, maxParts: 3 }, ending)).toBeUndefined();
    const exactly = ['a', 'b', 'c'].map((letter) => letter.repeat(36)).join('\n\n');
    expect(splitMessage(exactly, 40)).toHaveLength(3);
    expect(cutToParts(exactly, { limit: 40, maxParts: 3 }, ending)).toBeUndefined();
  });

  it('keeps as much of the start as fits with the ending, and counts what it left out', () => {
    const text = words(2_000);
    const cut = cutToParts(text, { limit: 100, maxParts: 4 }, ending)!;
    const parts = splitMessage(cut.text, 100);
    expect(parts).toHaveLength(4);
    expect(parts.at(-1)!.endsWith(`[cut: ${cut.leftOut} left out]`)).toBe(true);
    const kept = text.slice(0, text.length - cut.leftOut);
    expect(cut.text).toBe(`${kept.trimEnd()}${ending(cut.leftOut)}`);
    // Nearly four full parts: only the cuts' whitespace, a word and the ending are not text.
    expect(kept.length).toBeGreaterThan(4 * 100 - 60);
  });

  it('cuts between words where there is whitespace close by', () => {
    const cut = cutToParts(words(2_000), { limit: 100, maxParts: 2 }, ending)!;
    const kept = words(2_000).slice(0, words(2_000).length - cut.leftOut);
    expect(kept).toMatch(/word\d+\s*$/);
    expect(words(2_000).slice(kept.length)).toMatch(/^\s/);
  });

  it('cuts text without whitespace hard, never inside a surrogate pair', () => {
    const text = '😀'.repeat(500);
    const cut = cutToParts(text, { limit: 50, maxParts: 2 }, ending)!;
    expect(splitMessage(cut.text, 50).length).toBeLessThanOrEqual(2);
    expect(cut.leftOut % 2).toBe(0);
    expect(cut.text.startsWith('😀'.repeat(10))).toBe(true);
  });

  it('closes a code block open at the cut before the ending', () => {
    const text = `intro\n\`\`\`ts\n${'const x = 1;\n'.repeat(200)}\`\`\`\nafter`;
    const cut = cutToParts(text, { limit: 200, maxParts: 2 }, ending)!;
    expect(cut.text.endsWith(`\n\`\`\`${ending(cut.leftOut)}`)).toBe(true);
    expect(splitMessage(cut.text, 200).length).toBeLessThanOrEqual(2);
  });

  it('reads only the start of a very long text', () => {
    const cut = cutToParts('lorem ipsum '.repeat(1_000_000), { limit: 4_000, maxParts: 10 }, ending)!;
    expect(cut.leftOut).toBeGreaterThan(11_900_000);
    expect(splitMessage(cut.text, 4_000)).toHaveLength(10);
  });

  it('refuses an ending that does not fit in one part', () => {
    expect(() => cutToParts(words(100), { limit: 20, maxParts: 1 }, () => 'x'.repeat(21))).toThrow(
      RangeError,
    );
  });
});
