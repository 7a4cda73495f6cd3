/**
 * The turn slots of one worker, shared by its two doorbell sources: the shared BullMQ queue and the
 * worker's own list of direct (affinity) doorbells. Nothing waits for a slot while holding a doorbell:
 * a source checks for a free slot first and hands back what it cannot run.
 */
export class SlotGate {
  #free: number;
  #waiters: (() => void)[] = [];

  /** `onChange` hears every change between "some slot free" and "all busy" (the worker's presence). */
  constructor(
    size: number,
    private readonly onChange: (hasFree: boolean) => void = () => {},
  ) {
    this.#free = size;
  }

  get hasFree(): boolean {
    return this.#free > 0;
  }

  tryAcquire(): boolean {
    if (this.#free === 0) return false;
    this.#free--;
    if (this.#free === 0) this.onChange(false);
    return true;
  }

  release(): void {
    this.#free++;
    if (this.#free === 1) this.onChange(true);
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
