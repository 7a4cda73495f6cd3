/** The smallest limit that leaves room for a carried-over code fence and a surrogate pair. */
export const MIN_SPLIT_LIMIT = 16;

/** Appended to a part that ends inside a fenced code block. */
const CLOSE_FENCE = '\n```';

/** A line that opens or closes a fenced code block (CommonMark allows up to three spaces before it). */
const FENCE_LINE = /^ {0,3}```/;

/** Whitespace runs, the candidate cut points, ranked: a blank line, then a line end, then a space. */
const WHITESPACE_RUN = /\s+/g;

/**
 * Splits `text` into parts of at most `limit` UTF-16 code units. UTF-16 units are what Telegram and
 * Discord count, and never fewer than the characters Slack counts, so one rule is safe for all three.
 *
 * Cuts go at the last blank line, else the last line end, else the last whitespace that leaves the
 * part at least half full; a text without any is cut hard, never inside a surrogate pair (grapheme
 * clusters such as ZWJ emoji sequences may be cut). The whitespace at a cut is dropped: it would be
 * invisible at the end or start of a message anyway. When a part ends inside a ``` code block, the
 * block is closed at its end and reopened (with its language) at the start of the next part.
 *
 * Precisely: text = p0 w1 p1 … wn pn w, where each w is whitespace (possibly empty) and each pi is
 * part i without the fence lines added here (a leading fence line on parts after the first, a trailing
 * "\n```" on parts before the last). A text that fits is returned as the only part, unchanged.
 */
export function splitMessage(text: string, limit: number): string[] {
  if (!Number.isInteger(limit) || limit < MIN_SPLIT_LIMIT) {
    throw new RangeError(`splitMessage needs an integer limit of at least ${MIN_SPLIT_LIMIT}, got ${limit}`);
  }
  const parts: string[] = [];
  let rest = text;
  let reopen = '';
  while (reopen.length + rest.length > limit) {
    const { end, next } = findCut(rest, limit - reopen.length - CLOSE_FENCE.length);
    const body = reopen + rest.slice(0, end);
    rest = rest.slice(next);
    // Only whitespace was left after the cut: this is the last part, and a block open at its end is
    // the text's own, left open as the text leaves it.
    const open = rest === '' ? undefined : openFenceAtEnd(body);
    parts.push(open === undefined ? body : body + CLOSE_FENCE);
    // A long info string is not carried over, so that the next part keeps most of its room.
    reopen = open === undefined ? '' : `${open.length <= limit / 8 ? open : '```'}\n`;
  }
  if (rest !== '' || parts.length === 0) parts.push(reopen + rest);
  return parts;
}

/** Markdown as a platform posts it (`PlatformClient.render`). */
type Render = (markdown: string) => string;

/**
 * Splits Markdown into parts whose `render`ed text is at most `limit` UTF-16 units: split the
 * Markdown, then split again, tighter, any part that grew past the limit in rendering (escapes,
 * tags). Each part is whole Markdown (a code block cut is closed and reopened), so each renders alone.
 */
export function splitFormatted(markdown: string, limit: number, render: Render): string[] {
  return splitMessage(markdown, limit).flatMap((part) => fitted(part, limit, render));
}

function fitted(part: string, limit: number, render: Render, literal = false): string[] {
  const length = render(part).length;
  if (length <= limit) return [part];
  // Rendering rarely more than doubles a text, so a limit shrunk by the growth seen fits at once
  // nearly always; the floor keeps a hostile text (all escapes) from shrinking it forever.
  const tighter = Math.max(MIN_SPLIT_LIMIT, Math.floor((part.length * limit) / length) - MIN_SPLIT_LIMIT);
  if (tighter < part.length) {
    return splitMessage(part, tighter).flatMap((piece) => fitted(piece, limit, render, literal));
  }
  // A piece too short to split whose markup alone outgrows the limit (a code block's tags with a long
  // language name, quotes in quotes): it goes as its literal text, which only escapes make longer.
  return literal ? [part] : fitted(literalMarkdown(part), limit, render, true);
}

/** Markdown that shows `text` as written: every ASCII punctuation character backslash-escaped. */
function literalMarkdown(text: string): string {
  return text.replace(/[!-/:-@[-`{-~]/g, '\\$&');
}

/** How far back from the longest start that fits a cut looks for whitespace, so it does not split a word. */
const WORD_ROOM = 80;

/**
 * `text` cut so that it splits (`splitFormatted` with `render`) into at most `maxParts` parts of at
 * most `limit` units, with `ending(left out)` after it; undefined when the text fits as it is.
 * `left out` counts the units of `text` after the cut. The cut keeps the longest start that fits,
 * moved back to whitespace when there is some close by, never inside a surrogate pair; a code block
 * open there is closed before the ending. `ending` of any count must fit in one part.
 */
export function cutToParts(
  text: string,
  { limit, maxParts, render = (same) => same }: { limit: number; maxParts: number; render?: Render },
  ending: (leftOut: number) => string,
): { text: string; leftOut: number } | undefined {
  const split = (markdown: string) => splitFormatted(markdown, limit, render);
  // Longer than `maxParts` full parts, only a text that is mostly whitespace at its cuts could fit,
  // and splitting all of a very long reply just to find out costs more than such a text is worth.
  if (text.length <= maxParts * limit && split(text).length <= maxParts) return undefined;
  const cut = (at: number) => {
    const end = splitsSurrogatePair(text, at) ? at - 1 : at;
    const kept = text.slice(0, end).trimEnd();
    const close = openFenceAtEnd(kept) === undefined ? '' : CLOSE_FENCE;
    return { text: `${kept}${close}${ending(text.length - end)}`, leftOut: text.length - end };
  };
  const fits = (at: number) => split(cut(at).text).length <= maxParts;
  if (!fits(0)) throw new RangeError(`the ending does not fit in ${maxParts} parts of ${limit} units`);
  // Parts grow with the start (all but exactly), so a binary search finds the longest that fits or
  // one close to it; what it settles on always fits.
  let low = 0;
  let high = Math.min(text.length, maxParts * limit);
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (fits(mid)) low = mid;
    else high = mid - 1;
  }
  if (low === text.length || /\s/.test(text[low]!)) return cut(low);
  const from = Math.max(0, low - WORD_ROOM);
  const space = text.slice(from, low).search(/\s\S*$/);
  return cut(space >= 0 && fits(from + space) ? from + space : low);
}

/** Where to end this part (`end`) and start the next (`next`, past the dropped whitespace). */
function findCut(rest: string, budget: number): { end: number; next: number } {
  const contentStart = rest.search(/\S/);
  let best: { end: number; next: number; rank: number } | undefined;
  for (const run of rest.matchAll(WHITESPACE_RUN)) {
    const start = run.index;
    if (start > budget) break;
    // Cutting before the first content or in the first half would leave a (nearly) empty part.
    if (contentStart < 0 || start <= contentStart || start <= budget / 2) continue;
    const newlines = run[0].split('\n').length - 1;
    const rank = Math.min(newlines, 2);
    if (best === undefined || rank >= best.rank) best = { end: start, next: start + run[0].length, rank };
  }
  if (best !== undefined) return best;
  const end = splitsSurrogatePair(rest, budget) ? budget - 1 : budget;
  const skipped = rest.slice(end).search(/\S|$/);
  return { end, next: end + skipped };
}

function splitsSurrogatePair(text: string, at: number): boolean {
  const before = text.charCodeAt(at - 1);
  const after = text.charCodeAt(at);
  return before >= 0xd800 && before <= 0xdbff && after >= 0xdc00 && after <= 0xdfff;
}

/** The fence line of the code block still open at the end of `text`, if any. */
function openFenceAtEnd(text: string): string | undefined {
  let open: string | undefined;
  for (const line of text.split('\n')) {
    if (FENCE_LINE.test(line)) open = open === undefined ? line.trim() : undefined;
  }
  return open;
}
