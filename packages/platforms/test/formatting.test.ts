import { readTelegramHtml, slackControls } from '@tributary/testkit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toSlackMrkdwn } from '../src/format/slack-mrkdwn.js';
import { toTelegramHtml, toTelegramPlain } from '../src/format/telegram-html.js';
import { splitFormatted } from '../src/split-message.js';

/** Markdown an agent writes, with what each platform should be sent for it. */
const CORPUS: { name: string; markdown: string; slack: string; telegram: string }[] = [
  {
    name: 'emphasis',
    markdown: '**bold**, *italic*, _also italic_ and ~~gone~~',
    slack: '*bold*, _italic_, _also italic_ and ~gone~',
    telegram: '<b>bold</b>, <i>italic</i>, <i>also italic</i> and <s>gone</s>',
  },
  {
    name: 'a link whose address has a query',
    markdown: 'See [the docs](https://example.com/a?b=1&c=2) or https://example.org.',
    slack: 'See <https://example.com/a?b=1&amp;c=2|the docs> or <https://example.org>.',
    telegram:
      'See <a href="https://example.com/a?b=1&amp;c=2">the docs</a> or <a href="https://example.org">https://example.org</a>.',
  },
  {
    name: 'headings',
    markdown: '# Plan\n\n## Step 1 & 2\n\nDo it.',
    slack: '*Plan*\n\n*Step 1 &amp; 2*\n\nDo it.',
    telegram: '<b>Plan</b>\n\n<b>Step 1 &amp; 2</b>\n\nDo it.',
  },
  {
    name: 'nested and ordered lists',
    markdown: '- one\n  - one.a **bold**\n- two\n\n3. three\n4. four',
    slack: '• one\n    • one.a *bold*\n• two\n\n3. three\n4. four',
    telegram: '• one\n    • one.a <b>bold</b>\n• two\n\n3. three\n4. four',
  },
  {
    name: 'code with < and &',
    markdown: 'Run `a<b && c`:\n\n```ts\nif (a < b && c > d) {}\n```',
    slack: 'Run `a&lt;b &amp;&amp; c`:\n\n```\nif (a &lt; b &amp;&amp; c &gt; d) {}\n```',
    telegram:
      'Run <code>a&lt;b &amp;&amp; c</code>:\n\n<pre><code class="language-ts">if (a &lt; b &amp;&amp; c &gt; d) {}</code></pre>',
  },
  {
    name: 'a table',
    markdown: '| name | size |\n|---|---:|\n| a.ts | 12 |\n| **b** & c | 3 |',
    slack: '```\nname  | size\n------+-----\na.ts  | 12\nb &amp; c | 3\n```',
    telegram: '<pre>name  | size\n------+-----\na.ts  | 12\nb &amp; c | 3</pre>',
  },
  {
    name: 'emoji and quotes',
    markdown: '> Done ✅ 🎉\n> > "nested"\n\n---',
    slack: '> Done ✅ 🎉\n>\n> "nested"\n\n──────────',
    telegram: '<blockquote>Done ✅ 🎉\n\n&quot;nested&quot;</blockquote>\n\n──────────',
  },
  {
    name: 'mentions, and a link that shows its own address however it is written',
    markdown:
      'Hey <!channel> <!here> <@U0123ABC> <#C42|general>: <https://evil.example|https://bank.example>',
    slack:
      'Hey &lt;!channel&gt; &lt;!here&gt; &lt;@U0123ABC&gt; &lt;#C42|general&gt;: <https://evil.example%7Chttps://bank.example>',
    telegram:
      'Hey &lt;!channel&gt; &lt;!here&gt; &lt;@U0123ABC&gt; &lt;#C42|general&gt;: <a href="https://evil.example|https://bank.example">https://evil.example|https://bank.example</a>',
  },
  {
    name: 'a script link and raw HTML',
    markdown: '[click](javascript:alert(1)) <b>not bold</b> <script>x</script>',
    slack: 'click (javascript:alert(1)) &lt;b&gt;not bold&lt;/b&gt; &lt;script&gt;x&lt;/script&gt;',
    telegram: 'click (javascript:alert(1)) &lt;b&gt;not bold&lt;/b&gt; &lt;script&gt;x&lt;/script&gt;',
  },
];

describe('Markdown in each platform’s own formatting', () => {
  for (const { name, markdown, slack, telegram } of CORPUS) {
    it(`${name}: Slack mrkdwn`, () => {
      const sent = toSlackMrkdwn(markdown);
      expect(sent).toBe(slack);
      expect(slackControls(sent).filter((control) => control.kind === 'mention')).toEqual([]);
    });

    it(`${name}: Telegram HTML that Telegram reads`, () => {
      const sent = toTelegramHtml(markdown);
      expect(sent).toBe(telegram);
      expect(readTelegramHtml(sent)).toMatchObject({ ok: true });
    });
  }

  it('Telegram is shown the structure the Markdown meant', () => {
    const reading = readTelegramHtml(
      toTelegramHtml(`${CORPUS[4]!.markdown}\n\n[x](https://x.example) **y**`),
    );
    expect(reading).toMatchObject({ ok: true, text: expect.stringContaining('if (a < b && c > d) {}') });
    const types = reading.ok ? reading.entities.map((entity) => entity.type) : [];
    expect(types).toEqual(['code', 'pre', 'text_link', 'bold']);
    expect(reading.ok && reading.entities[1]).toMatchObject({ language: 'ts' });
  });

  it('lets mentions through only where the operator allows them, and never a disguised link', () => {
    const markdown = 'Ping <!here> and <@U0123ABC>, see <https://evil.example|https://bank.example>';
    const shownAddress = { kind: 'link', raw: '<https://evil.example%7Chttps://bank.example>' };
    expect(slackControls(toSlackMrkdwn(markdown, 'allow'))).toEqual([
      { kind: 'mention', raw: '<!here>' },
      { kind: 'mention', raw: '<@U0123ABC>' },
      shownAddress,
    ]);
    expect(slackControls(toSlackMrkdwn(markdown))).toEqual([shownAddress]);
  });

  it('Telegram’s plain fallback keeps the words and is never longer than the HTML', () => {
    const markdown = CORPUS.map((entry) => entry.markdown).join('\n\n');
    const plain = toTelegramPlain(markdown);
    expect(plain).toContain('if (a < b && c > d) {}');
    expect(plain).toContain('the docs (https://example.com/a?b=1&c=2)');
    expect(plain).not.toMatch(/<(pre|code|a href)/);
    expect(plain.length).toBeLessThanOrEqual(toTelegramHtml(markdown).length);
  });
});

/** Pieces an agent, or someone steering it, could write to break out of the formatting. */
const HOSTILE = fc.constantFrom(
  '<!channel>',
  '<!here>',
  '<!everyone>',
  '<@U0123ABC>',
  '<#C42|general>',
  '<!subteam^S1|team>',
  '<https://evil.example|bank>',
  '<mailto:a@b.c|x>',
  '&',
  '&amp;',
  '&#60;',
  '<',
  '>',
  '"',
  '**',
  '*',
  '_',
  '~~',
  '`',
  '```',
  '```js\n',
  '\n',
  '\n\n',
  ' ',
  '[a](',
  ')',
  '](https://x.example/?q=<b>&r="1")',
  'https://auto.example/path',
  '# ',
  '- ',
  '  - ',
  '> ',
  '> > ',
  '1. ',
  '| a | b |\n|---|---|\n| <x> | & |\n',
  '<b>',
  '</b>',
  '<a href="javascript:x">',
  '<pre>',
  '\\',
  '🎉',
  'é',
  '\u200b',
);
const HOSTILE_TEXT = fc
  .array(fc.oneof(HOSTILE, fc.string({ maxLength: 8 })), { maxLength: 40 })
  .map((pieces) => pieces.join(''));

describe('hostile text, fuzzed', () => {
  it('never reaches Slack as a mention, and every & is an escape', () => {
    fc.assert(
      fc.property(HOSTILE_TEXT, (markdown) => {
        const sent = toSlackMrkdwn(markdown);
        for (const control of slackControls(sent)) {
          expect(control.kind).toBe('link');
          expect(control.raw).toMatch(/^<(https?:|mailto:)/);
        }
        expect(sent.replace(/&(amp|lt|gt);/g, '')).not.toContain('&');
      }),
      { numRuns: 500 },
    );
  });

  it('is always HTML that Telegram reads, with a plain fallback no longer than it', () => {
    fc.assert(
      fc.property(HOSTILE_TEXT, (markdown) => {
        const sent = toTelegramHtml(markdown);
        const reading = readTelegramHtml(sent);
        expect(reading.ok ? '' : reading.error).toBe('');
        expect(toTelegramPlain(markdown).length).toBeLessThanOrEqual(sent.length);
      }),
      { numRuns: 500 },
    );
  });

  it('splits into parts that fit once rendered, each one whole', () => {
    fc.assert(
      fc.property(HOSTILE_TEXT, fc.integer({ min: 64, max: 300 }), (markdown, limit) => {
        for (const render of [toTelegramHtml, (text: string) => toSlackMrkdwn(text)]) {
          for (const part of splitFormatted(markdown, limit, render)) {
            expect(render(part).length).toBeLessThanOrEqual(limit);
          }
        }
        for (const part of splitFormatted(markdown, limit, toTelegramHtml)) {
          expect(readTelegramHtml(toTelegramHtml(part))).toMatchObject({ ok: true });
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('splits measured on the converted text', () => {
  it('counts escapes: a text of ampersands fits Telegram only once split by its HTML', () => {
    const markdown = 'a & b '.repeat(1_000);
    expect(markdown.length).toBeLessThan(4_096 * 2);
    const parts = splitFormatted(markdown, 4_096, toTelegramHtml);
    expect(parts.length).toBeGreaterThan(2);
    for (const part of parts) expect(toTelegramHtml(part).length).toBeLessThanOrEqual(4_096);
  });

  it('sends a piece whose markup alone outgrows the limit as its literal text, so it still fits', () => {
    // Found by the fuzzing above: an empty quoted code block is 69 characters of Telegram HTML.
    const markdown = '>```js\n';
    expect(toTelegramHtml(markdown).length).toBeGreaterThan(64);
    const parts = splitFormatted(markdown, 64, toTelegramHtml);
    for (const part of parts) expect(toTelegramHtml(part).length).toBeLessThanOrEqual(64);
    expect(
      parts.map((part) => readTelegramHtml(toTelegramHtml(part))).map((r) => (r.ok ? r.text : '')),
    ).toEqual(['>```js']);
  });

  it('keeps a code block a code block, with its language, on both sides of a split', () => {
    const code = Array.from({ length: 60 }, (_, line) => `const v${line} = a < b && c;`).join('\n');
    const parts = splitFormatted(`Here:\n\n\`\`\`ts\n${code}\n\`\`\`\n\nDone.`, 600, toTelegramHtml);
    expect(parts.length).toBeGreaterThan(2);
    const readings = parts.map((part) => readTelegramHtml(toTelegramHtml(part)));
    for (const reading of readings.slice(1, -1)) {
      expect(reading).toMatchObject({ ok: true, entities: [{ type: 'pre', language: 'ts' }] });
    }
    const shown = readings.map((reading) => (reading.ok ? reading.text : '')).join('\n');
    for (let line = 0; line < 60; line++) expect(shown).toContain(`const v${line} = a < b && c;`);
  });
});
