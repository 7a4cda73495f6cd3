/**
 * Our mention, the regular expression source `mention`, as a prompt should read: mentions that lead the
 * text (with the blanks around them) or end it (with the blanks before it) are the way the message
 * addresses us and are removed, so "<@U1> /cancel" and "/cancel <@U1>" stay commands; one in
 * mid-sentence is part of the sentence and becomes `@<name>`, or stays as written when our name is
 * unknown, so "you can count on <@U1> for that" never loses a word. Nothing else is touched.
 *
 * Linear time: each match is looked at once, and only the text between the leading mentions is checked
 * for blanks. Mentions are looked for in `text.slice(0, searchEnd)` only; see `throughLast`.
 */
export function stripMention(
  text: string,
  mention: string,
  name: string | undefined,
  flags = '',
  searchEnd = text.length,
): string {
  const haystack = searchEnd >= text.length ? text : text.slice(0, searchEnd);
  let out = '';
  let kept = 0;
  let leading = true;
  for (const match of haystack.matchAll(new RegExp(mention, `g${flags}`))) {
    const start = match.index;
    const end = start + match[0].length;
    leading &&= onlyBlanks(text, kept, start);
    if (leading) {
      kept = end;
      while (kept < text.length && isBlank(text.charCodeAt(kept))) kept++;
      continue;
    }
    if (end === text.length) {
      let cut = start;
      while (cut > kept && isBlank(text.charCodeAt(cut - 1))) cut--;
      return out + text.slice(kept, cut);
    }
    out += text.slice(kept, start) + (name === undefined ? match[0] : `@${name}`);
    kept = end;
  }
  return out + text.slice(kept);
}

function onlyBlanks(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (!isBlank(text.charCodeAt(i))) return false;
  return true;
}

/**
 * Where a mention that ends with `last` (and looks at nothing after itself) must be looked for:
 * `text` up to the last `last`. Past it such a mention cannot match, and an open-ended part like
 * `[^>]*` would otherwise be scanned to the end of the text from every start there, in quadratic time.
 */
export function throughLast(text: string, last: string): number {
  return text.lastIndexOf(last) + last.length;
}

function isBlank(code: number): boolean {
  return code === 0x20 || code === 0x09;
}

export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}
