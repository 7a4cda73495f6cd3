import { Lexer, type Token, type Tokens } from 'marked';

/**
 * How one platform writes what Markdown means. Every method gets text already in the platform's own
 * syntax except `text`, `code`, `codeBlock` and `href` arguments, which are the agent's raw characters:
 * the dialect alone decides what to escape, so nothing the agent writes reaches the platform as markup
 * it did not mean.
 */
export interface Dialect {
  /** Plain text, escaped. */
  text(raw: string): string;
  strong(inner: string): string;
  em(inner: string): string;
  del(inner: string): string;
  code(raw: string): string;
  /** A link the platform may follow; `inner` is already rendered. */
  link(href: string, inner: string): string;
  codeBlock(raw: string, language: string | undefined): string;
  heading(inner: string): string;
  /** One quoted block; quotes inside quotes are flattened into it, as no platform nests them well. */
  quote(inner: string): string;
}

/** Schemes a rendered link may carry; anything else is written out as text. */
const LINK_SCHEMES = /^(https?:|mailto:)/i;

const BULLET = '•';
const NESTED_INDENT = '    ';
const RULE = '──────────';

/**
 * Markdown (CommonMark with GitHub's tables, strikethrough and autolinks, as marked reads it) in a
 * platform's own syntax. Tables become aligned text in a code block and lists get bullets, because no
 * chat platform renders either; raw HTML is text.
 */
export function renderMarkdown(markdown: string, dialect: Dialect): string {
  return new Walk(dialect).blocks(Lexer.lex(markdown, { gfm: true }), 0).trim();
}

class Walk {
  constructor(private readonly dialect: Dialect) {}

  blocks(tokens: readonly Token[], quoteDepth: number): string {
    return tokens
      .map((token) => this.block(token, quoteDepth))
      .filter((rendered) => rendered !== '')
      .join('\n\n');
  }

  private block(token: Token, quoteDepth: number): string {
    const { dialect } = this;
    switch (token.type) {
      case 'space':
      case 'def':
        return '';
      case 'paragraph':
      case 'text':
        return this.inline(token as Tokens.Paragraph);
      case 'heading':
        return dialect.heading(this.inline(token as Tokens.Heading));
      case 'code':
        return dialect.codeBlock((token as Tokens.Code).text, languageOf((token as Tokens.Code).lang));
      case 'blockquote': {
        const inner = this.blocks((token as Tokens.Blockquote).tokens, quoteDepth + 1);
        return quoteDepth > 0 ? inner : dialect.quote(inner);
      }
      case 'list':
        return this.list(token as Tokens.List, quoteDepth, '');
      case 'table':
        return dialect.codeBlock(tableText(token as Tokens.Table), undefined);
      case 'hr':
        return dialect.text(RULE);
      default:
        return dialect.text(token.raw.trim());
    }
  }

  private list(list: Tokens.List, quoteDepth: number, indent: string): string {
    const first = typeof list.start === 'number' ? list.start : 1;
    return list.items
      .map((item, index) => {
        const mark = list.ordered ? `${first + index}.` : BULLET;
        const box = item.task ? (item.checked ? '☑ ' : '☐ ') : '';
        const lines: string[] = [];
        for (const child of item.tokens) {
          if (child.type === 'list') {
            lines.push(this.list(child as Tokens.List, quoteDepth, indent + NESTED_INDENT));
          } else if (child.type !== 'checkbox') {
            const rendered = this.block(child, quoteDepth);
            if (rendered !== '') lines.push(rendered.split('\n').join(`\n${indent}${NESTED_INDENT}`));
          }
        }
        const [head = '', ...rest] = lines;
        return [`${indent}${this.dialect.text(mark)} ${box}${head}`, ...rest].join('\n');
      })
      .join('\n');
  }

  private inline(token: { tokens?: Token[] | undefined; text: string }): string {
    return token.tokens === undefined ? this.dialect.text(token.text) : this.spans(token.tokens);
  }

  private spans(tokens: readonly Token[]): string {
    return tokens.map((token) => this.span(token)).join('');
  }

  private span(token: Token): string {
    const { dialect } = this;
    switch (token.type) {
      case 'text':
        return this.inline(token as Tokens.Text);
      case 'escape':
        return dialect.text((token as Tokens.Escape).text);
      case 'strong':
        return dialect.strong(this.spans((token as Tokens.Strong).tokens));
      case 'em':
        return dialect.em(this.spans((token as Tokens.Em).tokens));
      case 'del':
        return dialect.del(this.spans((token as Tokens.Del).tokens));
      case 'codespan':
        return dialect.code((token as Tokens.Codespan).text);
      case 'br':
        return '\n';
      case 'link':
      case 'image': {
        const { href, tokens, text } = token as Tokens.Link;
        const inner =
          tokens === undefined || tokens.length === 0 ? dialect.text(text || href) : this.spans(tokens);
        return LINK_SCHEMES.test(href) ? dialect.link(href, inner) : `${inner}${dialect.text(` (${href})`)}`;
      }
      default:
        // Raw HTML and anything marked reads that no platform has: the characters as written.
        return dialect.text(token.raw);
    }
  }
}

/** A fence's info string up to its first space, when it looks like a language name. */
function languageOf(info: string | undefined): string | undefined {
  const name = info?.trim().split(/\s/)[0];
  return name !== undefined && /^[\w+#.-]{1,32}$/.test(name) ? name : undefined;
}

/** A table as columns of plain text padded to line up in a monospace font. */
function tableText(table: Tokens.Table): string {
  const rows = [table.header, ...table.rows].map((row) => row.map((cell) => plainCell(cell.tokens)));
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => width(row[column] ?? '')))) ?? [];
  const line = (row: string[]) =>
    row
      .map((cell, column) => cell + ' '.repeat((widths[column] ?? 0) - width(cell)))
      .join(' | ')
      .trimEnd();
  const [header = [], ...body] = rows;
  return [line(header), widths.map((size) => '-'.repeat(size)).join('-+-'), ...body.map(line)].join('\n');
}

/** A cell's characters without marks: a code block shows marks literally. */
function plainCell(tokens: readonly Token[]): string {
  return tokens
    .map((token) => {
      const nested = (token as { tokens?: Token[] }).tokens;
      if (nested !== undefined && nested.length > 0) return plainCell(nested);
      return 'text' in token && typeof token.text === 'string' ? token.text : token.raw;
    })
    .join('')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Code points, which is closer to what a monospace font shows than UTF-16 units. */
function width(text: string): number {
  return [...text].length;
}
