import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { batchedWriter } from '../src/batched-writer.js';

/** A Node stream that records each write it is asked to make (one per syscall for a socket or pipe). */
function recordingStream(highWaterMark = 16_384) {
  const writes: string[][] = [];
  const stream = new Writable({
    highWaterMark,
    writev(chunks, callback) {
      writes.push(chunks.map(({ chunk }) => Buffer.from(chunk).toString()));
      setImmediate(callback);
    },
  });
  return { stream, writes };
}

const bytes = (text: string) => new TextEncoder().encode(text);

describe('batchedWriter', () => {
  it('sends the chunks of one tick in one write, and later ones in the next', async () => {
    const { stream, writes } = recordingStream();
    const writer = batchedWriter(stream).getWriter();
    await Promise.all([writer.write(bytes('a\n')), writer.write(bytes('b\n')), writer.write(bytes('c\n'))]);
    await new Promise((resolve) => setImmediate(resolve));
    await writer.write(bytes('d\n'));
    await writer.close();
    expect(writes).toEqual([['a\n', 'b\n', 'c\n'], ['d\n']]);
  });

  it('waits for drain when the stream is full, and fails a write once the stream is gone', async () => {
    const { stream, writes } = recordingStream(4);
    const writer = batchedWriter(stream).getWriter();
    let drained = false;
    const full = writer.write(bytes('0123456789')).then(() => {
      drained = true;
    });
    expect(drained).toBe(false);
    await full;
    expect(writes.flat()).toEqual(['0123456789']);

    stream.destroy();
    await expect(writer.write(bytes('late'))).rejects.toThrow('closed');
  });
});
