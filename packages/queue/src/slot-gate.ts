/**
 * The turn slots of one worker, shared by its doorbell sources: the shared BullMQ queue and the lists
 * (its own direct doorbells, the buckets' ready lists). The shared source checks for a free slot first
 * and hands back what it cannot run; DirectDoorbells pops only while a slot is free.
 */
export class SlotGate {
  #free: number;
  #waiters: (() => void)[] = [];

  constructor(size: number) {
    this.#free = size;
  }

  get hasFree(): boolean {
    return this.#free > 0;
  }

  tryAcquire(): boolean {
    if (this.#free === 0) return false;
    this.#free--;
    return true;
  }

  release(): void {
    this.#free++;
    this.wakeAll();
  }

  /** Resolves once a slot is free, or when `wakeAll` is called (shutdown). */
  whenFree(): Promise<void> {
    if (this.#free > 0) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  wakeAll(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}
