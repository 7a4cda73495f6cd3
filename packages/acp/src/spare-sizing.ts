/** The most spares any pool keeps, however large its budget: the bound of `AGENT_WARM_SPARES`. */
export const MAX_SPARES = 64;
/** Measurements of spares kept: the largest of the latest few is what one more spare is taken to cost. */
const MEASUREMENTS = 8;

/**
 * How many warm spares a pool aims to keep (docs/adr/0047). A new thread that finds none ready is the
 * sign that more arrived within one agent start than the pool held, so each such thread raises the
 * aim by one; the pool lowers it by one whenever spares went unused for a while (WarmSpares). The aim
 * never falls under `floor` and never rises past what `memoryBudget` pays for at the measured cost
 * of a spare; until a spare has been measured it stays at the floor. A floor of 0 means no spares at
 * all: an operator who sets it so does not want agents started ahead of need.
 */
export class SpareSizing {
  readonly floor: number;
  readonly memoryBudget: number;
  #target: number;
  readonly #measured: number[] = [];

  /** `memoryBudget` in bytes; 0 keeps the aim at the floor, as a fixed number of spares. */
  constructor(floor: number, memoryBudget: number) {
    this.floor = Math.max(0, Math.min(MAX_SPARES, floor));
    this.memoryBudget = Math.max(0, memoryBudget);
    this.#target = this.floor;
  }

  /** Spares aimed at now. */
  get target(): number {
    return this.#target;
  }

  /** What one spare is taken to cost, in bytes, once one was measured. */
  get bytesPerSpare(): number | undefined {
    return this.#measured.length ? Math.max(...this.#measured) : undefined;
  }

  /** The most spares the budget pays for now (never under the floor; none with a floor of 0). */
  get ceiling(): number {
    const each = this.bytesPerSpare;
    if (this.floor === 0 || each === undefined || each <= 0) return this.floor;
    return Math.max(this.floor, Math.min(MAX_SPARES, Math.floor(this.memoryBudget / each)));
  }

  /** A new thread found no spare ready: aims one higher if the budget allows; whether it did. */
  missed(): boolean {
    if (this.#target >= this.ceiling) return false;
    this.#target++;
    return true;
  }

  /** Spares went unused: aims one lower, not under the floor; whether it did. */
  shrink(): boolean {
    if (this.#target <= this.floor) return false;
    this.#target--;
    return true;
  }

  /** A ready spare's memory, in bytes; a dearer spare lowers the ceiling, and the aim with it. */
  measured(bytes: number): void {
    this.#measured.push(bytes);
    if (this.#measured.length > MEASUREMENTS) this.#measured.shift();
    this.#target = Math.min(this.#target, this.ceiling);
  }
}
