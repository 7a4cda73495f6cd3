import { type Dialect, renderMarkdown } from './markdown-renderer.js';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };

function escapeHtml(raw: string): string {
  return raw.replace(/[&<>"]/g, (character) => ESCAPES[character] ?? character);
}

function tag(name: string) {
  return (inner: string) => (inner === '' ? '' : `<${name}>${inner}</${name}>`);
}

const TELEGRAM_HTML: Dialect = {
  text: escapeHtml,
  strong: tag('b'),
  em: tag('i'),
  del: tag('s'),
  code: (raw) => (raw === '' ? '' : `<code>${escapeHtml(raw)}</code>`),
  link: (href, inner) => `<a href="${escapeHtml(href)}">${inner}</a>`,
  codeBlock: (raw, language) =>
    language === undefined
      ? `<pre>${escapeHtml(raw)}</pre>`
      : `<pre><code class="language-${escapeHtml(language)}">${escapeHtml(raw)}</code></pre>`,
  heading: tag('b'),
  quote: tag('blockquote'),
};

/**
 * Markdown in the HTML subset of Telegram's `parse_mode: "HTML"`: every `<`, `>`, `&` and `"` the agent
 * wrote is escaped, and only the tags Telegram documents are written, nested as it allows.
 */
export function toTelegramHtml(markdown: string): string {
  return renderMarkdown(markdown, TELEGRAM_HTML);
}

const PLAIN: Dialect = {
  text: (raw) => raw,
  strong: (inner) => inner,
  em: (inner) => inner,
  del: (inner) => inner,
  code: (raw) => raw,
  link: (href, inner) => (inner === href ? href : `${inner} (${href})`),
  codeBlock: (raw) => raw,
  heading: (inner) => inner,
  quote: (inner) => inner,
};

/**
 * The same message without any markup, for when Telegram refuses the HTML. It is never longer than
 * `toTelegramHtml` of the same text (every construct here is a shortening of its HTML), so a part
 * that fits as HTML fits as plain text.
 */
export function toTelegramPlain(markdown: string): string {
  return renderMarkdown(markdown, PLAIN);
}
