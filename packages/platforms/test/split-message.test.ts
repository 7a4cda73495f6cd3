import { describe, expect, it } from 'vitest';
import { MIN_SPLIT_LIMIT, splitMessage } from '../src/split-message.js';

const words = (n: number, word = 'word') => Array.from({ length: n }, () => word).join(' ');

describe('splitMessage', () => {
  it('returns a text that fits as the only part, unchanged', () => {
    expect(splitMessage('  hello\n\n', 20)).toEqual(['  hello\n\n']);
    expect(splitMessage('', 20)).toEqual(['']);
  });

  it('cuts at the last blank line first, dropping the blank lines', () => {
    const first = `${words(5)}\n${words(2)}`; // 34 units, with a line end inside
    expect(splitMessage(`${first}\n\n${words(3)}`, 40)).toEqual([first, words(3)]);
  });

  it('cuts at the last line end when no blank line leaves the part half full', () => {
    const text = `ab\n\n${words(4)}\n${words(4)}`;
    expect(splitMessage(text, 30)).toEqual([`ab\n\n${words(4)}`, words(4)]);
  });

  it('cuts at the last space otherwise; the last part may use the room kept for a closing fence', () => {
    expect(splitMessage(words(10), 22)).toEqual([words(3), words(3), words(4)]);
  });

  it('cuts a text without whitespace hard, but never inside a surrogate pair', () => {
    expect(splitMessage('x'.repeat(40), 16)).toEqual(['x'.repeat(12), 'x'.repeat(12), 'x'.repeat(16)]);
    const emoji = '😀'.repeat(10); // 20 units; an even budget of 12 would end on a high surrogate after 'x'
    const parts = splitMessage(`x${emoji}`, 16);
    expect(parts).toEqual([`x${'😀'.repeat(5)}`, '😀'.repeat(5)]);
    expect(parts.every((part) => part.isWellFormed())).toBe(true);
  });

  it('closes a code block at a cut and reopens it, with its language, in the next part', () => {
    const code = Array.from({ length: 8 }, (_, i) => `const v${i} = ${i};`).join('\n');
    const parts = splitMessage(`Here:\n\`\`\`ts\n${code}\n\`\`\`\nDone.`, 80);
    expect(parts.length).toBeGreaterThan(1);
    expect(parts[0]).toMatch(/^Here:\n```ts\n[\s\S]*\n```$/);
    expect(parts[1]).toMatch(/^```ts\nconst v/);
    expect(parts.at(-1)).toMatch(/\n```\nDone\.$/);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(80);
      expect(part.split('\n').filter((line) => line.startsWith('```')).length % 2).toBe(0);
    }
  });

  it('reopens a code block without a long info string, to keep the room for the code', () => {
    const parts = splitMessage(`\`\`\`${'x'.repeat(30)}\n${words(20)}\n\`\`\``, 64);
    expect(parts[1]).toMatch(/^```\nword/);
  });

  it('refuses a limit too small to carry a fence over', () => {
    expect(() => splitMessage('text', MIN_SPLIT_LIMIT - 1)).toThrow(RangeError);
    expect(() => splitMessage('text', 100.5)).toThrow(/integer limit of at least 16/);
  });
});
