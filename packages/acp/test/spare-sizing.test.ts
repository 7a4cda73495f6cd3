import { describe, expect, it } from 'vitest';
import { MAX_SPARES, SpareSizing } from '../src/spare-sizing.js';

const MB = 1024 * 1024;

describe('SpareSizing', () => {
  it('stays at its floor until a spare has been measured', () => {
    const sizing = new SpareSizing(1, 1024 * MB);
    expect(sizing.missed()).toBe(false);
    expect(sizing.target).toBe(1);
    expect(sizing.ceiling).toBe(1);
  });

  it('grows by one for each thread that found no spare, up to what the budget pays for', () => {
    const sizing = new SpareSizing(1, 250 * MB);
    sizing.measured(80 * MB);
    expect(sizing.ceiling).toBe(3);
    expect([sizing.missed(), sizing.missed(), sizing.missed()]).toEqual([true, true, false]);
    expect(sizing.target).toBe(3);
  });

  it('shrinks by one at a time, never under its floor', () => {
    const sizing = new SpareSizing(2, 1024 * MB);
    sizing.measured(100 * MB);
    sizing.missed();
    expect(sizing.target).toBe(3);
    expect([sizing.shrink(), sizing.shrink()]).toEqual([true, false]);
    expect(sizing.target).toBe(2);
  });

  it('takes the dearest of the latest spares as the cost of one, and lowers its aim when they grow', () => {
    const sizing = new SpareSizing(1, 400 * MB);
    sizing.measured(50 * MB);
    for (let i = 0; i < 8; i++) sizing.missed();
    expect(sizing.target).toBe(8);
    sizing.measured(100 * MB);
    expect(sizing.bytesPerSpare).toBe(100 * MB);
    expect(sizing.target).toBe(4);
    // Eight cheaper measurements later, the dear one is forgotten.
    for (let i = 0; i < 8; i++) sizing.measured(50 * MB);
    expect(sizing.ceiling).toBe(8);
    expect(sizing.target).toBe(4);
  });

  it('keeps its floor whatever the budget, and never more than the most spares any pool keeps', () => {
    const poor = new SpareSizing(2, 10 * MB);
    poor.measured(100 * MB);
    expect(poor.ceiling).toBe(2);
    const rich = new SpareSizing(1, 1024 ** 4);
    rich.measured(MB);
    expect(rich.ceiling).toBe(MAX_SPARES);
    expect(new SpareSizing(1, 0).ceiling).toBe(1);
    const off = new SpareSizing(0, 1024 * MB);
    off.measured(MB);
    expect(off.missed()).toBe(false);
    expect(off.ceiling).toBe(0);
  });
});
