import type { BatchRecord } from '@tributary/queue';
import { describe, expect, it } from 'vitest';
import { tallyThread } from './chaos/tally.js';

function record(ids: string[], claimedAt: number, committedAt: number): BatchRecord {
  return {
    batchId: `${claimedAt}`,
    thread: 't',
    fence: 1,
    type: 'UserRequest',
    claimedAt,
    committedAt,
    deliveries: 1,
    messages: ids.map((id, i) => ({ id, seq: i + 1, sid: `${i}-0` })),
  };
}

describe('chaos tally', () => {
  it('counts a clean history as clean', () => {
    expect(tallyThread(['a', 'b', 'c'], [record(['a'], 0, 5), record(['b', 'c'], 5, 9)])).toEqual({
      committed: 3,
      lost: 0,
      duplicates: 0,
      reordered: 0,
      overlapsCommitted: 0,
    });
  });

  it('sees loss, duplication, reordering and overlapping turns', () => {
    const history = [record(['b', 'a'], 0, 10), record(['a'], 5, 12)];
    expect(tallyThread(['a', 'b', 'c'], history)).toEqual({
      committed: 3,
      lost: 1,
      duplicates: 1,
      reordered: 1,
      overlapsCommitted: 1,
    });
  });
});
