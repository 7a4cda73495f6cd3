import { indexPage } from '../lua/listing-calls.js';
import type { Scripts } from '../lua/scripts.js';
import { type BucketKeys, bucketKeys } from '../thread-keys.js';

/** Where a page ends: the score and member of its last entry, as an opaque string for clients. */
export interface IndexCursor {
  score: number;
  member: string;
}

/** How one of the buckets' indexes is read: which index, in which order, within which scores. */
export interface IndexRange {
  index: (keys: BucketKeys) => string;
  order: 'asc' | 'desc';
  /** Redis score bounds; `now` and `(now` stand for Redis's clock. */
  min: string;
  max: string;
}

export interface IndexEntry {
  member: string;
  score: number;
}

export interface MergedPage {
  /** Redis's clock as one of the buckets read it. */
  now: number;
  entries: IndexEntry[];
  /** Undefined on the last page. */
  next: IndexCursor | undefined;
}

/** A cursor is the last entry's score and member, base64url JSON: opaque to clients, checked on return. */
export function encodeCursor(cursor: IndexCursor): string {
  return Buffer.from(JSON.stringify([cursor.score, cursor.member])).toString('base64url');
}

/** Undefined for a string no page handed out. */
export function decodeCursor(text: string): IndexCursor | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (!Array.isArray(value) || value.length !== 2) return undefined;
    const [score, member] = value as unknown[];
    if (typeof score !== 'number' || !Number.isSafeInteger(score) || typeof member !== 'string')
      return undefined;
    return { score, member };
  } catch {
    return undefined;
  }
}

/** Redis's order of members: bytes, as memcmp compares them. */
function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/**
 * Reads one page of an index kept per bucket, in one order across all buckets: each bucket gives its
 * first `limit` + 1 entries after the cursor (one script call each, in parallel: in a Cluster the buckets
 * live on different primaries), and the page is the first `limit` of them merged. Its Redis work is
 * one call per bucket and at most `limit` + 1 entries from each, however many the indexes hold.
 */
export async function readMergedPage(
  scripts: Scripts,
  layout: { prefix: string; buckets: number },
  range: IndexRange,
  after: IndexCursor | undefined,
  limit: number,
): Promise<MergedPage> {
  const pages = await Promise.all(
    Array.from({ length: layout.buckets }, (_, bucket) =>
      scripts.run(
        indexPage,
        { index: range.index(bucketKeys(layout.prefix, bucket)) },
        {
          order: range.order,
          min: range.min,
          max: range.max,
          afterScore: after === undefined ? '' : after.score,
          afterMember: after?.member ?? '',
          // One more than a page: whether anything follows it is then known without another read.
          limit: limit + 1,
        },
      ),
    ),
  );
  const sign = range.order === 'asc' ? 1 : -1;
  const merged = pages
    .flatMap((page) => page.entries)
    .sort((a, b) => sign * (a.score - b.score || byteOrder(a.member, b.member)));
  const entries = merged.slice(0, limit);
  const last = entries.at(-1);
  return {
    now: pages[0]?.now ?? Date.now(),
    entries,
    next: merged.length > limit && last ? { score: last.score, member: last.member } : undefined,
  };
}
