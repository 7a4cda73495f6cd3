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

/** One bucket's part of a page being read: what it gave so far, and whether it has more. */
interface BucketPart {
  bucket: number;
  entries: IndexEntry[];
  exhausted: boolean;
}

/**
 * Reads one page of an index kept per bucket, in one order across all buckets: the page is the first
 * `limit` entries after the cursor of all buckets merged (one more tells whether anything follows).
 * Each bucket first gives twice its even share of them (one script call each, in parallel: in a Cluster
 * the buckets live on different primaries); a bucket that gave all it was asked and whose last entry
 * would still be on the page then gives more, from where it stopped, until the page is known. So a page
 * costs about `limit` entries read, not one page from every bucket, however the entries are spread;
 * at most `limit` + 1 from each bucket.
 */
export async function readMergedPage(
  scripts: Scripts,
  layout: { prefix: string; buckets: number },
  range: IndexRange,
  after: IndexCursor | undefined,
  limit: number,
): Promise<MergedPage> {
  const sign = range.order === 'asc' ? 1 : -1;
  const order = (a: IndexEntry, b: IndexEntry) => sign * (a.score - b.score || byteOrder(a.member, b.member));
  const parts: BucketPart[] = Array.from({ length: layout.buckets }, (_, bucket) => ({
    bucket,
    entries: [],
    exhausted: false,
  }));
  let now: number | undefined;
  let ask = Math.min(limit + 1, Math.ceil((2 * (limit + 1)) / layout.buckets) + 1);
  let asking = parts;
  let merged: IndexEntry[] = [];
  while (asking.length > 0) {
    const pages = await Promise.all(
      asking.map((part) => {
        const from = part.entries.at(-1) ?? after;
        return scripts.run(
          indexPage,
          { index: range.index(bucketKeys(layout.prefix, part.bucket)) },
          {
            order: range.order,
            min: range.min,
            max: range.max,
            afterScore: from === undefined ? '' : from.score,
            afterMember: from?.member ?? '',
            limit: ask,
          },
        );
      }),
    );
    pages.forEach((page, i) => {
      const part = asking[i]!;
      now ??= page.now;
      part.entries.push(...page.entries);
      part.exhausted = page.entries.length < ask;
    });
    merged = parts.flatMap((part) => part.entries).sort(order);
    // The page's last place, once filled: a bucket whose last entry comes after it has none to add.
    const last = merged[limit];
    asking = parts.filter(
      (part) => !part.exhausted && (last === undefined || order(part.entries.at(-1)!, last) <= 0),
    );
    ask = limit + 1;
  }
  const entries = merged.slice(0, limit);
  const end = entries.at(-1);
  return {
    now: now ?? Date.now(),
    entries,
    next: merged.length > limit && end ? { score: end.score, member: end.member } : undefined,
  };
}
