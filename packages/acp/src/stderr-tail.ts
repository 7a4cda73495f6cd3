/**
 * Longest line kept, in UTF-16 code units (about bytes for the ASCII agents print): a longer one keeps
 * its end, where an error or a progress bar's latest state is. An agent drawing a progress bar with `\r`
 * writes one endless line, which must not grow the worker's memory with it.
 */
export const MAX_LINE_LENGTH = 4096;

/** What a cut line starts with, so a reader knows it is only the end. */
const CUT = '…';

/**
 * Splits an agent's stderr into lines and keeps the last few for error reports. Every line is scrubbed
 * of credentials as it arrives: an agent that fails tends to print the key it failed with, and these
 * lines go to logs, to Redis (a dead letter's reason) and nowhere else unscrubbed. What it holds is
 * bounded (`limit` lines and the unfinished one, each at most MAX_LINE_LENGTH), so a chunk costs time
 * in its own length however long the line it continues.
 */
export class StderrTail {
  readonly #limit: number;
  readonly #scrub: (line: string) => string;
  readonly #lines: string[] = [];
  #partial = '';

  constructor(scrub: (line: string) => string, limit = 20) {
    this.#scrub = scrub;
    this.#limit = limit;
  }

  /** Adds a chunk and returns the lines it completed. */
  push(chunk: string): string[] {
    const parts = (this.#partial + chunk).split('\n');
    this.#partial = tailOf(parts.pop() ?? '');
    const lines = parts.filter((line) => line.trim() !== '').map((line) => this.#scrub(tailOf(line)));
    this.#lines.push(...lines);
    this.#lines.splice(0, Math.max(0, this.#lines.length - this.#limit));
    return lines;
  }

  toString(): string {
    return [...this.#lines, this.#scrub(this.#partial)].filter((line) => line !== '').join('\n');
  }
}

/**
 * The end of `text`, at most MAX_LINE_LENGTH long. It starts after a whitespace: a credential cut in
 * half would no longer look like one to the scrubber, so no piece of a word is kept.
 */
function tailOf(text: string): string {
  if (text.length <= MAX_LINE_LENGTH) return text;
  const end = text.slice(text.length - (MAX_LINE_LENGTH - CUT.length));
  const word = end.search(/\s/);
  return word < 0 ? CUT : CUT + end.slice(word + 1);
}
