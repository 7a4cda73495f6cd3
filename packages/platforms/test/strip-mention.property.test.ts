import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { InboundAdapter } from '../src/inbound.js';
import { forwarded } from './discord-inbound-fixtures.js';
import { gateway } from './gateway-inbound-fixtures.js';
import { slack } from './slack-inbound-fixtures.js';
import { telegram } from './telegram-inbound-fixtures.js';

/**
 * Each adapter's mention, as the regular expression source it rewrites, checked against a plain
 * `replace` over the whole text (quadratic on blank runs, so only fit for short texts).
 */
const platforms: { name: string; adapter: InboundAdapter; self: string; mention: string; flags: string }[] = [
  { name: 'slack', adapter: slack, self: 'U0BOT', mention: '<@U0BOT(?:\\|[^>]*)?>', flags: '' },
  { name: 'discord', adapter: forwarded, self: '100', mention: '<@!?100>', flags: '' },
  { name: 'gateway', adapter: gateway, self: 'Ubot', mention: '<@Ubot>', flags: '' },
  {
    name: 'telegram',
    adapter: telegram,
    self: 'TributaryBot',
    mention: '(?<![\\w@])@TributaryBot(?!\\w)',
    flags: 'i',
  },
];

/** Leading mentions and one ending the text go with their blanks; every other becomes `@name`. */
function plainRewrite(text: string, mention: string, flags: string, name: string): string {
  // The mention ending the text also takes the blanks before it, which a match before it may have
  // passed on: it leaves a mark, and the blanks before the mark go at the end.
  const END = '\u0000';
  let leadEnd = 0;
  return text
    .replace(
      new RegExp(`([ \\t]*)(?:${mention})([ \\t]*)`, `g${flags}`),
      (whole: string, before: string, after: string, offset: number) => {
        if (offset === leadEnd) {
          leadEnd = offset + whole.length;
          return '';
        }
        leadEnd = -1;
        return after === '' && offset + whole.length === text.length ? END : `${before}@${name}${after}`;
      },
    )
    .replace(new RegExp(`[ \\t]*${END}$`), '');
}

/** Text made of mentions (ours, others', unterminated), blanks and the characters around them. */
const text = fc
  .array(
    fc.constantFrom(
      '<@U0BOT>',
      '<@U0BOT|tributary>',
      '<@U0BOT|',
      '<@U0BOTX>',
      '<@W0BOB|bob>',
      '<@100>',
      '<@!100>',
      '<@1000>',
      '<@Ubot>',
      '@TributaryBot',
      '@tributarybot',
      '@TributaryBots',
      'a@TributaryBot',
      ' ',
      '  ',
      '\t',
      '\n',
      '<',
      '>',
      '|',
      '@',
      '!',
      'x',
      'é',
    ),
    { maxLength: 24 },
  )
  .map((parts) => parts.join(''));

describe('stripping our own mention', () => {
  it.each(platforms)(
    '$name rewrites exactly what a plain replace does',
    ({ adapter, self, mention, flags }) => {
      fc.assert(
        fc.property(text, (t) => {
          expect(adapter.stripSelfMention(t, self, 'us')).toBe(plainRewrite(t, mention, flags, 'us'));
        }),
        { numRuns: 2000 },
      );
    },
  );

  it.each(platforms)('$name handles a megabyte of blanks or of half-open mentions', ({ adapter, self }) => {
    const blanks = '\t '.repeat(512 * 1024);
    expect(adapter.stripSelfMention(`${mentionOf(adapter, self)}${blanks}hi`, self)).toBe('hi');
    expect(adapter.stripSelfMention(`hi${blanks}x`, self)).toBe(`hi${blanks}x`);
    expect(adapter.stripSelfMention(`hi${blanks}${mentionOf(adapter, self)}`, self, 'us')).toBe('hi');
    const halfOpen = '<@U0BOT|'.repeat(128 * 1024);
    expect(adapter.stripSelfMention(halfOpen, self)).toBe(halfOpen);
  });
});

function mentionOf(adapter: InboundAdapter, self: string): string {
  return adapter === telegram ? `@${self}` : `<@${self}>`;
}
