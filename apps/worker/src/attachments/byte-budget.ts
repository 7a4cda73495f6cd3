/**
 * Bytes a worker may hold for the files of its turns at once, across all of them: a turn takes what a
 * file may need before downloading it, waiting in line (first asked, first served) while other turns
 * hold the budget, and gives it back once the agent has its prompt. A claim larger than the whole
 * budget is cut to it, so it can still go ahead alone.
 */
export class ByteBudget {
  private free: number;
  private readonly line: { bytes: number; grant: () => void }[] = [];

  constructor(readonly total: number) {
    this.free = total;
  }

  /** Bytes held now. */
  get held(): number {
    return this.total - this.free;
  }

  /** Resolves with a hold of `bytes` once they are free; rejects with `signal`'s reason if it aborts first. */
  take(bytes: number, signal?: AbortSignal): Promise<BudgetHold> {
    const wanted = Math.min(Math.max(0, Math.ceil(bytes)), this.total);
    signal?.throwIfAborted();
    if (this.line.length === 0 && wanted <= this.free) {
      this.free -= wanted;
      return Promise.resolve(new BudgetHold(this, wanted));
    }
    return new Promise((resolve, reject) => {
      const place = {
        bytes: wanted,
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(new BudgetHold(this, wanted));
        },
      };
      const onAbort = () => {
        this.line.splice(this.line.indexOf(place), 1);
        reject(signal!.reason);
        this.serve();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.line.push(place);
    });
  }

  /** @internal A hold gives `bytes` back. */
  giveBack(bytes: number): void {
    this.free += bytes;
    this.serve();
  }

  private serve(): void {
    while (this.line.length > 0 && this.line[0]!.bytes <= this.free) {
      const next = this.line.shift()!;
      this.free -= next.bytes;
      next.grant();
    }
  }
}

/** Bytes of a ByteBudget held for one file. */
export class BudgetHold {
  constructor(
    private readonly budget: ByteBudget,
    private bytes: number,
  ) {}

  /** Keeps only `bytes` of the hold (what the file turned out to need), giving the rest back. */
  shrink(bytes: number): void {
    const kept = Math.max(0, Math.min(this.bytes, Math.ceil(bytes)));
    this.budget.giveBack(this.bytes - kept);
    this.bytes = kept;
  }

  release(): void {
    this.shrink(0);
  }
}
