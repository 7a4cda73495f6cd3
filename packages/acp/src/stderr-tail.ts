/** Splits an agent's stderr into lines and keeps the last few for error reports. */
export class StderrTail {
  readonly #limit: number;
  readonly #lines: string[] = [];
  #partial = '';

  constructor(limit = 20) {
    this.#limit = limit;
  }

  /** Adds a chunk and returns the lines it completed. */
  push(chunk: string): string[] {
    const parts = (this.#partial + chunk).split('\n');
    this.#partial = parts.pop() ?? '';
    const lines = parts.filter((line) => line.trim() !== '');
    this.#lines.push(...lines);
    this.#lines.splice(0, Math.max(0, this.#lines.length - this.#limit));
    return lines;
  }

  toString(): string {
    return [...this.#lines, this.#partial].filter((line) => line !== '').join('\n');
  }
}
