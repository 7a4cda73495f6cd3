import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bucketOf, decodeThread, dedupMember, encodeThread, threadKeys } from '../src/thread-keys.js';

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

  it('keeps idempotency keys apart within a thread once the part they share with it is dropped', () => {
    // Few characters, surrogate pairs among them, so keys often share long prefixes with the thread.
    const text = fc.string({
      unit: fc.constantFrom('a', 'b', ':', '1', '\u00e9', '\u{1f600}', '\u{1f601}'),
      maxLength: 8,
    });
    const nearThread = (thread: string) =>
      fc.tuple(fc.nat({ max: thread.length }), text).map(([cut, rest]) => {
        const kept = thread.slice(0, cut);
        // A cut inside a surrogate pair would not be a well-formed key.
        return (kept.isWellFormed() ? kept : thread.slice(0, cut - 1)) + rest;
      });
    fc.assert(
      fc.property(
        text
          .filter((t) => t.length > 0)
          .chain((thread) => fc.tuple(fc.constant(thread), nearThread(thread), nearThread(thread))),
        ([thread, a, b]) => {
          const [ma, mb] = [dedupMember(thread, a), dedupMember(thread, b)];
          expect(ma.isWellFormed()).toBe(true);
          if (a !== b) expect(Buffer.from(ma)).not.toEqual(Buffer.from(mb));
        },
      ),
    );
  });

  it('keeps of a platform key that starts with its thread id only the message part', () => {
    const thread = 'gateway:discord:1234567890123456789:t-5';
    expect(dedupMember(thread, `${thread}:m-5-1`)).toBe('39::m-5-1');
    expect(dedupMember('th', 'a')).toBe('0:a');
    expect(dedupMember('\u{1f600}', '\u{1f601}')).toBe('0:\u{1f601}');
    expect(() => dedupMember('th', '\ud800')).toThrow(/well-formed/);
  });

  it('puts every key of a thread under its bucket hash tag', () => {
    const k = threadKeys('trib', 64, 'slack:T1:C9:17.5');
    const tag = `{b${k.bucket}}`;
    for (const key of [
      k.state,
      k.inbox,
      k.history,
      k.dead,
      k.dedup,
      k.dedupUntil,
      k.sched,
      k.run,
      k.batchseq,
      k.deadindex,
      k.deadreasons,
      k.deadreplyindex,
      k.deadreplyreasons,
      k.paused,
      k.activity,
      k.receiptids,
      k.receiptidsage,
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
