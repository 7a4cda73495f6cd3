/** A formatting entity as Telegram reports it: offsets and lengths in UTF-16 units of the visible text. */
export interface TelegramEntity {
  type: string;
  offset: number;
  length: number;
  url?: string;
  language?: string;
}

export type TelegramHtmlReading =
  | { ok: true; text: string; entities: TelegramEntity[] }
  | { ok: false; error: string };

/** The tags of Telegram's HTML style, by the entity each makes. */
const ENTITY_OF: Record<string, string> = {
  b: 'bold',
  strong: 'bold',
  i: 'italic',
  em: 'italic',
  u: 'underline',
  ins: 'underline',
  s: 'strikethrough',
  strike: 'strikethrough',
  del: 'strikethrough',
  'tg-spoiler': 'spoiler',
  span: 'spoiler',
  a: 'text_link',
  code: 'code',
  pre: 'pre',
  blockquote: 'blockquote',
  'tg-emoji': 'custom_emoji',
};

const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"' };
const TAG = /^<(\/?)([a-z-]+)((?:\s+[a-z-]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]+))?)*)\s*>/i;
const ATTRIBUTE = /([a-z-]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/gi;
const ENTITY = /^&(?:([a-z]+)|#(\d+)|#x([0-9a-f]+));/i;

/**
 * Reads a text sent with `parse_mode: "HTML"` as the Bot API documents it: only its tags, every other
 * `<`, `>` and `&` written as an entity, tags closed in order, nothing inside `code`/`pre` but the
 * `code` that names a `pre` block's language, no quote within a quote. A text it cannot read is
 * refused as Telegram refuses it: `can't parse entities: <why>`.
 */
export function readTelegramHtml(html: string): TelegramHtmlReading {
  let text = '';
  const open: { name: string; entity: TelegramEntity }[] = [];
  const entities: TelegramEntity[] = [];
  const refuse = (why: string, at: number): TelegramHtmlReading => ({
    ok: false,
    error: `Bad Request: can't parse entities: ${why} at byte offset ${Buffer.byteLength(html.slice(0, at))}`,
  });
  let at = 0;
  while (at < html.length) {
    const character = html[at]!;
    if (character === '>') return refuse("Character '>' is reserved and must be escaped", at);
    if (character === '&') {
      const entity = ENTITY.exec(html.slice(at));
      const decoded =
        entity?.[1] !== undefined
          ? NAMED[entity[1].toLowerCase()]
          : entity?.[2] !== undefined
            ? String.fromCodePoint(Number(entity[2]))
            : entity?.[3] !== undefined
              ? String.fromCodePoint(Number.parseInt(entity[3], 16))
              : undefined;
      if (entity === null || decoded === undefined) return refuse("Character '&' is reserved", at);
      text += decoded;
      at += entity[0].length;
      continue;
    }
    if (character !== '<') {
      text += character;
      at += 1;
      continue;
    }
    const tag = TAG.exec(html.slice(at));
    if (tag === null) return refuse("Character '<' is reserved and must be escaped", at);
    const [whole, slash, rawName = '', rawAttributes = ''] = tag;
    const name = rawName.toLowerCase();
    const type = ENTITY_OF[name];
    if (type === undefined) return refuse(`Unsupported ${slash ? 'end' : 'start'} tag "${name}"`, at);
    if (slash) {
      const top = open.pop();
      if (top?.name !== name) return refuse(`Unmatched end tag "${name}"`, at);
      top.entity.length = text.length - top.entity.offset;
      if (top.entity.length > 0) entities.push(top.entity);
    } else {
      const inside = open.at(-1)?.name;
      const codeInPre = name === 'code' && inside === 'pre';
      if ((inside === 'code' || inside === 'pre') && !codeInPre) {
        return refuse(`Can't nest "${name}" inside "${inside}"`, at);
      }
      if (name === 'blockquote' && open.some((tagOpen) => tagOpen.name === 'blockquote')) {
        return refuse("Blockquote entities can't be nested", at);
      }
      const attributes = attributesOf(rawAttributes);
      const entity: TelegramEntity = { type, offset: text.length, length: 0 };
      if (name === 'a') {
        if (!attributes.href) return refuse('Empty href in "a" tag', at);
        entity.url = attributes.href;
      }
      if (codeInPre) {
        const language = /^language-(.+)$/.exec(attributes.class ?? '')?.[1];
        const pre = open.at(-1)!.entity;
        if (language !== undefined) pre.language = language;
      }
      open.push({ name, entity });
    }
    at += whole.length;
  }
  const unclosed = open.at(-1);
  if (unclosed !== undefined) {
    return refuse(`Can't find end tag corresponding to start tag "${unclosed.name}"`, html.length);
  }
  // A `code` that only names a `pre` block's language is part of that block, not an entity.
  const shown = entities.filter(
    (entity) =>
      !(
        entity.type === 'code' &&
        entities.some(
          (pre) => pre.type === 'pre' && pre.offset === entity.offset && pre.length === entity.length,
        )
      ),
  );
  return { ok: true, text, entities: shown.sort((a, b) => a.offset - b.offset) };
}

function attributesOf(raw: string): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const match of raw.matchAll(ATTRIBUTE)) {
    attributes[match[1]!.toLowerCase()] = decode(match[2] ?? match[3] ?? match[4] ?? '');
  }
  return attributes;
}

function decode(value: string): string {
  return value.replace(/&(lt|gt|amp|quot);/g, (_, name: string) => NAMED[name] ?? '');
}
