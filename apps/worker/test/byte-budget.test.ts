import { describe, expect, it } from 'vitest';
import { ByteBudget } from '../src/attachments/byte-budget.js';

describe('ByteBudget', () => {
  it('grants in the order asked, as holds shrink and are released', async () => {
    const budget = new ByteBudget(100);
    const first = await budget.take(80);
    const granted: string[] = [];
    const second = budget.take(50).then((hold) => {
      granted.push('second');
      return hold;
    });
    // Fits, but waits behind the earlier claim: first asked, first served.
    const third = budget.take(10).then((hold) => {
      granted.push('third');
      return hold;
    });
    await Promise.resolve();
    expect(granted).toEqual([]);
    first.shrink(40);
    await second;
    await third;
    expect(granted).toEqual(['second', 'third']);
    expect(budget.held).toBe(100);
    (await second).release();
    (await third).release();
    first.release();
    expect(budget.held).toBe(0);
  });

  it('cuts a claim larger than the whole budget to it, and leaves the line when its signal aborts', async () => {
    const budget = new ByteBudget(100);
    const whole = await budget.take(1_000);
    expect(budget.held).toBe(100);
    const waiting = budget.take(10, AbortSignal.timeout(20));
    await expect(waiting).rejects.toMatchObject({ name: 'TimeoutError' });
    whole.release();
    const next = await budget.take(10);
    expect(budget.held).toBe(10);
    next.release();
  });
});
