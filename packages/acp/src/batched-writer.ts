import type { Writable } from 'node:stream';

/**
 * A web stream over a Node stream for the ACP SDK's `ndJsonStream`, which writes every message (and
 * `Writable.toWeb` every chunk) on its own: here the chunks written within one tick leave together,
 * in one write, as the stream stays corked until the next tick. Backpressure is kept: a write that
 * fills the stream's buffer waits for `drain`, or fails when the stream closes first.
 */
export function batchedWriter(stream: Writable): WritableStream<Uint8Array> {
  let corked = false;
  const uncork = () => {
    corked = false;
    stream.uncork();
  };
  return new WritableStream<Uint8Array>({
    write(chunk) {
      if (stream.destroyed || stream.writableEnded) throw new Error('the stream is closed');
      if (!corked) {
        corked = true;
        stream.cork();
        process.nextTick(uncork);
      }
      if (stream.write(chunk)) return;
      return new Promise<void>((resolve, reject) => {
        const settle = (error?: Error) => {
          stream.off('drain', onDrain);
          stream.off('close', onClose);
          if (error) reject(error);
          else resolve();
        };
        const onDrain = () => settle();
        const onClose = () => settle(new Error('the stream closed before it drained'));
        stream.once('drain', onDrain);
        stream.once('close', onClose);
      });
    },
    close() {
      return new Promise<void>((resolve) => stream.end(resolve));
    },
    abort() {
      stream.destroy();
    },
  });
}
