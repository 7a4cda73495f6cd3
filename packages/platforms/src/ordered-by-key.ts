/**
 * Runs tasks one after another per key and concurrently across keys: platform calls that must land
 * in order (reactions of one thread or one batch) while a slow call elsewhere holds nobody up. Tasks
 * must not reject; a key's chain is dropped once it runs dry, so memory follows the keys in flight.
 */
export class OrderedByKey {
  private readonly tails = new Map<string, Promise<void>>();

  run(key: string, task: () => Promise<void>): void {
    const next = (this.tails.get(key) ?? Promise.resolve()).then(task);
    this.tails.set(key, next);
    void next.then(() => {
      if (this.tails.get(key) === next) this.tails.delete(key);
    });
  }

  /** Resolves once every task queued so far has run (graceful shutdown). */
  async settle(): Promise<void> {
    await Promise.all(this.tails.values());
  }
}
