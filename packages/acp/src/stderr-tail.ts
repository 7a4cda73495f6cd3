/**
 * Splits an agent's stderr into lines and keeps the last few for error reports. Every line is scrubbed
 * of credentials as it arrives: an agent that fails tends to print the key it failed with, and these
 * lines go to logs, to Redis (a dead letter's reason) and nowhere else unscrubbed.
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
    this.#partial = parts.pop() ?? '';
    const lines = parts.filter((line) => line.trim() !== '').map(this.#scrub);
    this.#lines.push(...lines);
    this.#lines.splice(0, Math.max(0, this.#lines.length - this.#limit));
    return lines;
  }

  toString(): string {
    return [...this.#lines, this.#scrub(this.#partial)].filter((line) => line !== '').join('\n');
  }
}
