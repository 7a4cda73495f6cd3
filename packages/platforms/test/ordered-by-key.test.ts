import { describe, expect, it } from 'vitest';
import { OrderedByKey } from '../src/ordered-by-key.js';

/** A task that finishes when `release` is called. */
function gate() {
  let release!: () => void;
  const done = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { done, release };
}

describe('ordered by key', () => {
  it('runs one key in order, other keys past it, and settles once all ran', async () => {
    const order = new OrderedByKey();
    const log: string[] = [];
    const slow = gate();
    order.run('a', async () => {
      await slow.done;
      log.push('a1');
    });
    order.run('a', async () => void log.push('a2'));
    const b = gate();
    order.run('b', async () => {
      log.push('b1');
      b.release();
    });
    await b.done;
    expect(log).toEqual(['b1']);
    slow.release();
    await order.settle();
    expect(log).toEqual(['b1', 'a1', 'a2']);
  });
});
