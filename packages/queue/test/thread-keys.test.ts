import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bucketOf, decodeThread, encodeThread, threadKeys } from '../src/thread-keys.js';

describe('thread keys', () => {
  it('encodes injectively and reversibly, with no separator or hash-tag characters', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', minLength: 1 }),
        fc.string({ unit: 'binary', minLength: 1 }),
        (a, b) => {
          for (const id of [a, b]) {
            expect(encodeThread(id)).not.toMatch(/[:{}\s]/);
            expect(decodeThread(encodeThread(id))).toBe(id);
          }
          if (a !== b) expect(encodeThread(a)).not.toBe(encodeThread(b));
        },
      ),
    );
  });

  it('refuses ids that would collide once encoded', () => {
    expect(() => encodeThread('\ud800')).toThrow(/well-formed/);
    expect(() => encodeThread('')).toThrow(/empty/);
  });

  it('puts every key of a thread under its bucket hash tag', () => {
    const k = threadKeys('trib', 64, 'slack:T1:C9:17.5');
    const tag = `{b${k.bucket}}`;
    for (const key of [
      k.state,
      k.inbox,
      k.history,
      k.dead,
      k.dedup('x:y'),
      k.sched,
      k.run,
      k.batchseq,
      k.deadindex,
    ]) {
      expect(key.match(/\{[^}]*\}/g)).toEqual([tag]);
    }
  });

  it('spreads threads over buckets stably', () => {
    expect(bucketOf('slack:T1:C1:1', 64)).toBe(bucketOf('slack:T1:C1:1', 64));
    const used = new Set(Array.from({ length: 1000 }, (_, i) => bucketOf(`thread-${i}`, 16)));
    expect(used.size).toBe(16);
  });
});
