import { ok } from './decoders.js';
import { defineScript } from './scripts.js';

/** The admin API's read scripts: a page of a bucket index, a bucket's counts for the overview. */

/** One page of a bucket index: Redis's clock and the members with their scores (index-page-1.lua). */
export interface IndexPage {
  now: number;
  entries: { member: string; score: number }[];
}

export const indexPage = defineScript({
  name: 'indexPage',
  keys: ['index'],
  args: ['order', 'min', 'max', 'afterScore', 'afterMember', 'limit'],
  decode(reply): IndexPage {
    const now = ok(reply).num(1);
    const entries: IndexPage['entries'] = [];
    for (let at = 2; at < reply.length; at += 2) {
      entries.push({ member: reply.str(at), score: reply.num(at + 1) });
    }
    return { now, entries };
  },
});

/** What the overview counts in one bucket (bucket-summary-10.lua). */
export interface BucketSummary {
  now: number;
  running: number;
  runnable: number;
  scheduled: number;
  paused: number;
  /** Threads with activity within the idle time (whatever their state). */
  active: number;
  deadLetters: number;
  deadReplies: number;
  /** Counts by reason class. */
  deadLetterReasons: Map<string, number>;
  deadReplyReasons: Map<string, number>;
}

export const bucketSummary = defineScript({
  name: 'bucketSummary',
  keys: [
    'run',
    'sched',
    'paused',
    'activity',
    'deadindex',
    'deadclasses',
    'deadreasons',
    'deadreplyindex',
    'deadreplyclasses',
    'deadreplyreasons',
  ],
  args: [],
  decode(reply): BucketSummary {
    let at = 10;
    const reasons = () => {
      const count = reply.num(at - 1);
      const map = new Map<string, number>();
      for (let i = 0; i < count; i++) map.set(reply.str(at + 2 * i), reply.num(at + 2 * i + 1));
      at += 2 * count + 1;
      return map;
    };
    ok(reply);
    const deadLetterReasons = reasons();
    const deadReplyReasons = reasons();
    return {
      now: reply.num(1),
      running: reply.num(2),
      runnable: reply.num(3),
      scheduled: reply.num(4),
      paused: reply.num(5),
      active: reply.num(6),
      deadLetters: reply.num(7),
      deadReplies: reply.num(8),
      deadLetterReasons,
      deadReplyReasons,
    };
  },
});

/** The admin API's reads (the fleet listing loads them). */
export const LISTING_SCRIPTS = [indexPage, bucketSummary];
