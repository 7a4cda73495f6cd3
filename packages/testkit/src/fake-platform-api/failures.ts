import type { FakeFailure, FakePlatform } from './types.js';

/** Failures queued by `failNext`, taken first-in first-out by the requests they match. */
export class FailureQueue {
  private readonly queued: { failure: FakeFailure; left: number }[] = [];

  add(failure: FakeFailure): void {
    this.queued.push({ failure, left: failure.times ?? 1 });
  }

  take(platform: FakePlatform, method: string): FakeFailure | undefined {
    const index = this.queued.findIndex(
      ({ failure }) => failure.platform === platform && (failure.method ?? method) === method,
    );
    const entry = this.queued[index];
    if (entry === undefined) return undefined;
    entry.left -= 1;
    if (entry.left <= 0) this.queued.splice(index, 1);
    return entry.failure;
  }
}
