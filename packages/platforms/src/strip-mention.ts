/**
 * Removes every match of the regular expression source `mention`, with the blanks that separated it
 * from the rest (after it, or before it when it ends the text), so "<@U1> hi" and "hi <@U1>" both
 * become "hi". Nothing else is touched.
 *
 * It gives what `text.replace(/(?:mention)[ \t]*|[ \t]+(?:mention)$/g, '')` gives for a mention that
 * never starts with a blank and matches at most one way where it starts (every platform's does), in
 * linear time: that expression tries `[ \t]+` from every blank of a run, so a long run of blanks cost
 * time quadratic in its length. Mentions are looked for in `text.slice(0, searchEnd)` only; see
 * `throughLast`.
 */
export function stripMention(text: string, mention: string, flags = '', searchEnd = text.length): string {
  const haystack = searchEnd >= text.length ? text : text.slice(0, searchEnd);
  let out = '';
  let kept = 0;
  for (const match of haystack.matchAll(new RegExp(mention, `g${flags}`))) {
    const start = match.index;
    let end = start + match[0].length;
    if (end === text.length) {
      // A mention that ends the text takes the blanks before it, those not already taken.
      let cut = start;
      while (cut > kept && isBlank(text.charCodeAt(cut - 1))) cut--;
      return out + text.slice(kept, cut);
    }
    out += text.slice(kept, start);
    while (end < text.length && isBlank(text.charCodeAt(end))) end++;
    kept = end;
  }
  return out + text.slice(kept);
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
