import { type Dialect, renderMarkdown } from './markdown-renderer.js';

/** Whether an agent's `<@U…>`, `<!here>`, `<!channel>`, `<#C…>` reach Slack as mentions (SLACK_REPLY_MENTIONS). */
export type SlackMentions = 'escape' | 'allow';

/**
 * Slack's own mention and link syntax: `<@U123>`, `<#C123|name>`, `<!here>`, `<!subteam^S1|team>`,
 * `<!date^…>` and the rest of `<!…>`. Kept as written only where the operator allows mentions.
 */
const SLACK_MENTION = /<(?:[@#][UWCGB][A-Z0-9]+(?:\|[^<>]*)?|![a-z]+(?:\^[^<>|]*)?(?:\|[^<>]*)?)>/g;

/**
 * Markdown as Slack mrkdwn. `&`, `<` and `>` are escaped everywhere, as Slack asks: they are the only
 * characters Slack reads as control sequences, so an agent cannot write a live `<!channel>` or a link
 * that shows other text than its address unless mentions are allowed.
 */
export function toSlackMrkdwn(markdown: string, mentions: SlackMentions = 'escape'): string {
  return renderMarkdown(markdown, mentions === 'allow' ? ALLOWING_MENTIONS : ESCAPING_ALL);
}

/**
 * Markdown for Slack's own streaming (`markdown_text`), which Slack renders itself: each `<` is followed
 * by an invisible word joiner, so that no `<@U…>`, `<!channel>` or `<url|text>` can form. The final
 * reply replaces the streamed text with `toSlackMrkdwn`'s.
 */
export function toSlackStreamMarkdown(markdown: string, mentions: SlackMentions = 'escape'): string {
  return mentions === 'allow' ? markdown : markdown.replaceAll('<', '<\u2060');
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

function escapeSlack(raw: string): string {
  return raw.replace(/[&<>]/g, (character) => ESCAPES[character] ?? character);
}

/** Slack marks need a character inside; an empty one would show its marks. */
function mark(sign: string) {
  return (inner: string) => (inner === '' ? '' : `${sign}${inner}${sign}`);
}

function dialect(text: (raw: string) => string): Dialect {
  return {
    text,
    strong: mark('*'),
    em: mark('_'),
    del: mark('~'),
    code: (raw) => (raw === '' ? '' : `\`${escapeSlack(raw)}\``),
    link: (href, inner) => {
      // Inside `<…>` a `|` ends the address; escaped, the link still goes where it says.
      const address = escapeSlack(href).replaceAll('|', '%7C');
      return inner === escapeSlack(href) ? `<${address}>` : `<${address}|${inner}>`;
    },
    codeBlock: (raw) => `\`\`\`\n${escapeSlack(raw)}\n\`\`\``,
    heading: mark('*'),
    quote: (inner) =>
      inner
        .split('\n')
        .map((line) => `>${line === '' ? '' : ` ${line}`}`)
        .join('\n'),
  };
}

const ESCAPING_ALL = dialect(escapeSlack);

const ALLOWING_MENTIONS = dialect((raw) => {
  let out = '';
  let from = 0;
  for (const match of raw.matchAll(SLACK_MENTION)) {
    out += escapeSlack(raw.slice(from, match.index)) + match[0];
    from = match.index + match[0].length;
  }
  return out + escapeSlack(raw.slice(from));
});
