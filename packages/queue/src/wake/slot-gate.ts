/**
 * The turn slots of one worker, shared by its doorbell sources: the shared BullMQ queue and its own
 * list of direct doorbells. The shared source checks for a free slot first and hands back what it
 * cannot run; DirectDoorbells pops only while a slot is free.
 */
export class SlotGate {
  #free: number;
  #paused = false;
  #waiters: (() => void)[] = [];

  constructor(size: number) {
    this.#free = size;
  }

  get hasFree(): boolean {
    return this.#free > 0 && !this.#paused;
  }

  tryAcquire(): boolean {
    if (!this.hasFree) return false;
    this.#free--;
    return true;
  }

  /** No slot is handed out until `resume`, free or not (turns running keep theirs). */
  pause(): void {
    this.#paused = true;
  }

  resume(): void {
    this.#paused = false;
    this.wakeAll();
  }

  release(): void {
    this.#free++;
    this.wakeAll();
  }

  /** Resolves once a slot is free, or when `wakeAll` is called (shutdown). */
  whenFree(): Promise<void> {
    if (this.hasFree) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  wakeAll(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}
