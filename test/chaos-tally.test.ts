import type { BatchRecord } from '@tributary/queue';
import { describe, expect, it } from 'vitest';
import { tallyThread } from './chaos/tally.js';

function record(
  ids: string[],
  claimedAt: number,
  endedAt: number,
  status: BatchRecord['status'] = 'complete',
): BatchRecord {
  return {
    batchId: `${claimedAt}`,
    thread: 't',
    fence: 1,
    type: 'UserRequest',
    status,
    claimedAt,
    endedAt,
    deliveries: 1,
    messages: ids.map((id, i) => ({
      id,
      seq: i + 1,
      sid: `${i}-0`,
      tok: 1,
      origin: 'user',
      at: claimedAt,
      body: id,
      lane: '',
    })),
    reply: '',
    stopReason: 'end_turn',
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

  it('counts a failed attempt before the commit of the same batch once', () => {
    const history = [record(['a', 'b'], 0, 3, 'failed'), record(['a', 'b'], 4, 9)];
    expect(tallyThread(['a', 'b'], history)).toMatchObject({ committed: 2, duplicates: 0, lost: 0 });
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
