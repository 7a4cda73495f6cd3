import type { FakeApiCall, WaitForCallsOptions } from './types.js';

/** Every call the fake answered, with ways to wait for calls without polling. */
export class CallLog {
  private readonly calls: FakeApiCall[] = [];
  private readonly listeners = new Set<() => void>();
  private closed = false;

  record(call: Omit<FakeApiCall, 'seq'>): void {
    this.calls.push({ ...call, seq: this.calls.length + 1 });
    for (const listener of [...this.listeners]) listener();
  }

  all(): FakeApiCall[] {
    return [...this.calls];
  }

  get lastSeq(): number {
    return this.calls.length;
  }

  waitFor(
    predicate: (call: FakeApiCall) => boolean,
    options: WaitForCallsOptions = {},
  ): Promise<FakeApiCall[]> {
    const { timeoutMs = 10_000, count = 1 } = options;
    const matching = () => this.calls.filter(predicate);
    return this.until(
      () => matching().length >= count,
      timeoutMs,
      () => matching(),
      () => {
        const seen = this.calls.map((call) => `${call.platform} ${call.method} ${call.status}`).join(', ');
        return new Error(
          `timed out after ${timeoutMs} ms waiting for ${count} matching platform call(s); ` +
            `got ${matching().length}; all calls: [${seen}]`,
        );
      },
    );
  }

  /** Calls after `since`, waiting up to `waitMs` for the first one when there are none yet. */
  after(since: number, waitMs: number): Promise<FakeApiCall[]> {
    const newer = () => this.calls.slice(Math.max(0, since));
    return this.until(() => newer().length > 0, waitMs, newer, newer);
  }

  /** Ends every wait now (the server is closing), each as if its time ran out. */
  release(): void {
    this.closed = true;
    for (const listener of [...this.listeners]) listener();
  }

  private until<T>(
    done: () => boolean,
    timeoutMs: number,
    value: () => T,
    onTimeout: () => T | Error,
  ): Promise<T> {
    return new Promise((resolve, reject) => {
      const finish = (result: T | Error) => {
        clearTimeout(timer);
        this.listeners.delete(check);
        if (result instanceof Error) reject(result);
        else resolve(result);
      };
      const check = () => {
        if (done()) finish(value());
        else if (this.closed) finish(onTimeout());
      };
      const timer = setTimeout(() => finish(onTimeout()), timeoutMs);
      this.listeners.add(check);
      check();
    });
  }
}
