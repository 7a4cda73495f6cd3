import type { BatchRecord } from '@tributary/queue';

export interface Tally {
  committed: number;
  lost: number;
  duplicates: number;
  reordered: number;
  overlapsCommitted: number;
}

/**
 * Checks one thread's history (oldest first) against what was acknowledged to producers: every sent id
 * committed exactly once, in sending order, and no two committed turns overlapping. Records of turns
 * that failed (to be retried) are not commits.
 */
export function tallyThread(sent: readonly string[], history: readonly BatchRecord[]): Tally {
  const tally: Tally = { committed: 0, lost: 0, duplicates: 0, reordered: 0, overlapsCommitted: 0 };
  const position = new Map(sent.map((id, i) => [id, i]));
  const seen = new Set<string>();
  let last = -1;
  let previous: BatchRecord | undefined;
  for (const record of history) {
    if (record.status !== 'complete' && record.status !== 'cancelled') continue;
    if (previous && record.claimedAt < previous.endedAt) tally.overlapsCommitted++;
    previous = record;
    for (const message of record.messages) {
      tally.committed++;
      if (seen.has(message.id)) {
        tally.duplicates++;
        continue;
      }
      seen.add(message.id);
      const at = position.get(message.id) ?? Number.NaN;
      if (!(at > last)) tally.reordered++;
      else last = at;
    }
  }
  for (const id of sent) if (!seen.has(id)) tally.lost++;
  return tally;
}

export function addTallies(a: Tally, b: Tally): Tally {
  return {
    committed: a.committed + b.committed,
    lost: a.lost + b.lost,
    duplicates: a.duplicates + b.duplicates,
    reordered: a.reordered + b.reordered,
    overlapsCommitted: a.overlapsCommitted + b.overlapsCommitted,
  };
}
